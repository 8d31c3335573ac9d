/**
 * Whether this node allows a bootstrap (contract §12: apply needs "the host's local bootstrap
 * policy allowing it"): the `bootstrap` section of the node policy (docs/node-policy.md), written
 * on the node — never sent by the operator, never in a bundle. No policy, an unreadable or
 * invalid one, or `bootstrap.allow: false` denies. Read afresh from the file each time: the SSH
 * recovery receiver runs while no controller does.
 */
import { FleetError, NODE_POLICY_PATH, isFleetError, type Registry } from '@fleet/core/node';
import { loadNodePolicy } from '../policy/store.js';

/** Throws `BOOTSTRAP_REFUSED` unless the node's policy allows a bootstrap with `supervisor`. */
export async function requireBootstrapAllowed(
  home: string,
  supervisor: string,
  registry: Pick<Registry, 'domains'>,
): Promise<void> {
  let bootstrap;
  try {
    bootstrap = (await loadNodePolicy({ home, registry })).policy.bootstrap;
  } catch (error) {
    const why = isFleetError(error) ? error.message : String(error);
    throw new FleetError('BOOTSTRAP_REFUSED', `bootstrap is denied: ${why}`, {
      suggestions: isFleetError(error) ? [...(error.suggestions ?? [])] : [],
    });
  }
  if (!bootstrap.allow) {
    throw new FleetError(
      'BOOTSTRAP_REFUSED',
      `this node's policy denies bootstrap (on the node: bootstrap.allow in ${NODE_POLICY_PATH})`,
    );
  }
  if (bootstrap.supervisors !== undefined && !bootstrap.supervisors.includes(supervisor)) {
    throw new FleetError(
      'BOOTSTRAP_REFUSED',
      `this node's policy does not allow the ${supervisor} supervisor for a bootstrap (allowed: ${bootstrap.supervisors.join(', ') || 'none'})`,
    );
  }
}
