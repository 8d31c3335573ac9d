/**
 * The supervisor's part of `fleet version` (contract §11, §12, supervision drift): which of the
 * supervisors' probers a host is asked for (its fleet.yaml `supervisor`'s), and their facts
 * evaluated by each prober's operator half into `supervisor` items of layer `runtime`, as
 * `fleet drift` reports them. Pure.
 */
import { asFleetError } from '../client/for-each-host.js';
import type { VersionItem } from '../report/version-report.js';
import type { SnapshotProbeResult } from '../wire/snapshot.js';
import type { ProberRuntime } from './drift-inputs.js';
import type { VersionDesired } from './version-desired.js';

/** The supervisor's probers a host is asked for: those of its fleet.yaml `supervisor`. */
export function supervisorProbersFor(
  probers: readonly ProberRuntime[],
  desired: Pick<VersionDesired, 'supervisor'>,
): ProberRuntime[] {
  return probers.filter((p) => p.supervisor !== undefined && p.supervisor === desired.supervisor);
}

/**
 * The supervisor's items: each asked prober's facts evaluated by its operator half (kind
 * `supervisor`, layer `runtime`). A prober the node did not answer, could not run, or whose facts
 * could not be evaluated is one `error` item; the rest of the report stands. Pure.
 */
export function supervisorItems(
  host: string,
  answered: readonly SnapshotProbeResult[] | undefined,
  probers: readonly ProberRuntime[],
  desired: Pick<VersionDesired, 'canonicalVersion' | 'variables'>,
): VersionItem[] {
  return probers.flatMap((runtime): VersionItem[] => {
    const base = { layer: 'runtime' as const, kind: 'supervisor' as const, name: runtime.id };
    const got = answered?.find((p) => p.prober === runtime.id);
    if (!got) return [{ ...base, state: 'error', detail: 'the node did not answer this prober' }];
    if (got.state === 'error')
      return [{ ...base, state: 'error', detail: `${got.code}: ${got.message}` }];
    try {
      return runtime.prober
        .evaluate(got.facts, {
          host,
          variables: desired.variables ?? {},
          canonicalVersion: desired.canonicalVersion,
          parameters: {},
        })
        .map((item) => ({
          ...base,
          layer: item.layer,
          ...(item.path === undefined ? {} : { path: item.path }),
          state: item.state,
          ...(item.detail === undefined ? {} : { detail: item.detail }),
        }));
    } catch (error) {
      const failure = asFleetError(error);
      return [
        { ...base, state: 'error', detail: `could not evaluate its facts: ${failure.message}` },
      ];
    }
  });
}
