/**
 * Which supervisor runs this node's controller, from the two things the node itself keeps
 * (contract §5.1, §12; docs/runtime-lifecycle.md, "Which supervisor runs the node"):
 *
 * - the node policy's `supervisor` (written by the node's owner: what *should* run it), and
 * - `supervisor.json` (written by the adapter that installed the controller: what *does*).
 *
 * The record is what fleet can drive (it names the unit or task and the definition installed).
 * The policy, when it names one, must agree with the record; a disagreement is refused — at the
 * controller's start and before any coupled restart — because driving either could restart the
 * wrong process. Never anything a request names.
 */
import { FleetError } from '../errors.js';
import type { NodeSupervisor } from '../schemas/node-policy.js';
import type { SupervisorRecord } from './supervisor-record.js';

/** The outcome: a supervisor fleet drives, or none (and why, for the refusal's message). */
export type ResolvedNodeSupervisor =
  | { readonly drives: true; readonly record: SupervisorRecord }
  | { readonly drives: false; readonly reason: string };

/** The policy's name for the controller, in the record's terms (`null`: kind only, the lab). */
function policyName(policy: NodeSupervisor): string | null {
  switch (policy.kind) {
    case 'systemd-user':
      return policy.unit;
    case 'windows-task':
      // `\fleet-controller` in Task Scheduler's path form; the record keeps the bare name.
      return policy.task.replace(/^\\/, '');
    case 'launchd':
      return policy.label;
    case 'lab':
    case 'none':
      return null;
  }
}

function describePolicy(policy: NodeSupervisor): string {
  const name = policyName(policy);
  return name === null ? policy.kind : `${policy.kind} ${name}`;
}

/**
 * Resolves the policy's `supervisor` against the adapter's record. Throws `SUPERVISOR_MISMATCH`
 * when both name one and they differ (kind, or unit/task name).
 */
export function resolveNodeSupervisor(
  policy: NodeSupervisor | undefined,
  record: SupervisorRecord | null,
  where: { readonly policyFile: string; readonly recordFile: string },
): ResolvedNodeSupervisor {
  if (record === null) {
    if (policy === undefined || policy.kind === 'none') {
      return {
        drives: false,
        reason: 'no bootstrap adapter recorded installing this controller (supervisor.json)',
      };
    }
    return {
      drives: false,
      reason: `the node policy names ${describePolicy(policy)}, but no bootstrap adapter recorded installing the controller there (supervisor.json): install it through fleet bootstrap or fleet lab up`,
    };
  }
  if (policy === undefined) return { drives: true, record };
  const name = policyName(policy);
  if (policy.kind !== record.supervisor || (name !== null && name !== record.name)) {
    throw new FleetError(
      'SUPERVISOR_MISMATCH',
      `${where.policyFile} says ${describePolicy(policy)} runs this controller, but ${where.recordFile} records ${record.supervisor} ${record.name} as installed: make them agree on the node (edit the policy's supervisor, or reinstall through fleet bootstrap)`,
    );
  }
  return { drives: true, record };
}
