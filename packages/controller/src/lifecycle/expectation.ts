/**
 * What a runtime must report to be accepted again, from what it reports now (pure): the prior
 * runtime's expectation, recorded at `begin` as the rollback target. A development build (no
 * generation) has none: there is nothing verified to go back to.
 */
import type { IdentityResponse, RuntimeExpectation } from '@fleet/core/node';

export function expectationOf(identity: IdentityResponse): RuntimeExpectation | null {
  if (identity.build.sha256 === null) return null;
  return {
    nodeId: identity.nodeId,
    package: identity.package,
    version: identity.version,
    build: { sha256: identity.build.sha256, commit: identity.build.commit },
    protocol: { min: identity.protocol, max: identity.protocol },
    catalog: {
      domains: identity.catalog.domains.map((entry) => entry.domain),
      probers: identity.catalog.probers.map((entry) => entry.id),
      bootstrapAdapters: identity.catalog.bootstrapAdapters.map((entry) => entry.supervisor),
    },
  };
}
