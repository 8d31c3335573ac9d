/**
 * The controller's supervisor, behind core's `ControllerSupervisor` seam (contract §10.2): the
 * controller hands the node half the supervisor the node recorded when it was installed
 * (`ctx.controllerSupervisor()`: a systemd user unit, a Windows scheduled task, the lab
 * supervisor — each through its bootstrap adapter), never one a request names.
 *
 * `switchNodeId` — record the new flag, restart, check the restarted controller's flag; on failure
 * put the old flag back and restart again — is core's; it is re-exported here for the domain's
 * own callers.
 */
import {
  switchNodeId,
  type ControllerSupervisor,
  type NodeContext,
  type SwitchOutcome,
  type SwitchPlan,
} from '@fleet/core/plugin';

export { switchNodeId, type SwitchOutcome, type SwitchPlan };

/** The supervisor of the controller this node half runs in, as the node recorded it; or none. */
export async function recordedSupervisor(ctx: NodeContext): Promise<ControllerSupervisor | null> {
  return (await ctx.controllerSupervisor?.()) ?? null;
}
