/**
 * Whether this node allows a runtime change (contract §12: apply needs "the host's local bootstrap
 * policy allowing it"): the `bootstrap` section of the node policy (docs/node-policy.md), written
 * on the node — never sent by the operator, never in a bundle. It gates every runtime change, an
 * upgrade's stage as much as a bootstrap's (issue 36: a `runtime:upgrade` token alone must not
 * change what runs here). No policy, an unreadable or invalid one, or `bootstrap.allow: false`
 * denies. Read afresh from the file each time: the SSH recovery receiver runs while no controller
 * does.
 */
import {
  FleetError,
  NODE_POLICY_PATH,
  isFleetError,
  type NodeRuntimePolicy,
  type Registry,
} from '@fleet/core/node';
import { loadNodePolicy } from '../policy/store.js';

/**
 * Throws `BOOTSTRAP_REFUSED` unless the node's policy allows a runtime change (a bootstrap or an
 * upgrade) with `supervisor`. Answers the policy's `runtime` section (the release signatures the
 * change needs, ADR 0019), from the same read.
 */
export async function requireBootstrapAllowed(
  home: string,
  supervisor: string,
  registry: Pick<Registry, 'domains'>,
): Promise<NodeRuntimePolicy | undefined> {
  let policy;
  try {
    policy = (await loadNodePolicy({ home, registry })).policy;
  } catch (error) {
    const why = isFleetError(error) ? error.message : String(error);
    throw new FleetError('BOOTSTRAP_REFUSED', `runtime changes are denied: ${why}`, {
      suggestions: isFleetError(error) ? [...(error.suggestions ?? [])] : [],
    });
  }
  const { bootstrap } = policy;
  if (!bootstrap.allow) {
    throw new FleetError(
      'BOOTSTRAP_REFUSED',
      `this node's policy denies runtime changes — bootstrap and upgrade (on the node: bootstrap.allow in ${NODE_POLICY_PATH})`,
    );
  }
  if (bootstrap.supervisors !== undefined && !bootstrap.supervisors.includes(supervisor)) {
    throw new FleetError(
      'BOOTSTRAP_REFUSED',
      `this node's policy does not allow runtime changes through the ${supervisor} supervisor (allowed: ${bootstrap.supervisors.join(', ') || 'none'})`,
    );
  }
  return policy.runtime;
}
