/**
 * The gate on unattended convergence (contract §10.3): a scheduled run may write only for a domain
 * that declares no process coupling and whose opt-in, `domains.<domain>.unattended: allow` in
 * fleet.yaml, is both committed (reviewed) and in the working tree. Pure, generic on the domain's
 * declaration as registered; used by the harness reconcile and by `fleet schedule install`.
 */
import type { Coupling } from '../interfaces/domain.js';

/** The opt-in of contract §10.3: `domains.<domain>.unattended` in fleet.yaml. */
export type UnattendedPolicy = 'allow' | 'deny';

export interface UnattendedGate {
  readonly domain: string;
  /** The domain's declared coupling (its installer's declaration, as registered). */
  readonly coupling: Coupling;
  /** The policy in the working tree's fleet.yaml. */
  readonly worktree: UnattendedPolicy;
  /** The policy in fleet.yaml at the commit being reconciled (`undefined`: no fleet.yaml there). */
  readonly committed: UnattendedPolicy | undefined;
}

/**
 * Why unattended convergence is refused for a domain, or `null` when it is allowed. Generic on
 * the declaration: any domain whose installer declares a process coupling is refused whatever
 * fleet.yaml says (a timer must never restart a process); otherwise the opt-in must be `allow`
 * both in the reviewed commit and in the working tree (an uncommitted edit does not enable it,
 * and a pending edit back to `deny` already disables it).
 */
export function unattendedRefusal(gate: UnattendedGate): string | null {
  if (gate.coupling.kind !== 'none') {
    const actions = gate.coupling.actions.map((action) => action.kind).join(', ');
    return `domain ${gate.domain} declares a process coupling (${actions}): unattended convergence is never allowed for it`;
  }
  if (gate.committed !== 'allow') {
    return gate.worktree === 'allow'
      ? `domains.${gate.domain}.unattended: allow is not committed: unattended convergence needs a reviewed commit of fleet.yaml`
      : `fleet.yaml does not opt in: set domains.${gate.domain}.unattended: allow in a reviewed commit`;
  }
  if (gate.worktree !== 'allow') {
    return `the working tree's fleet.yaml sets domains.${gate.domain}.unattended: ${gate.worktree}`;
  }
  return null;
}
