/**
 * The controller's supervisor, behind core's `ControllerSupervisor` seam: `recordNodeId` then
 * `restart`. The lab supervisor is the one implemented now (its control socket is handed to the
 * controller in `FLEET_LAB_SUPERVISOR`); the systemd user unit and the Windows scheduled task
 * implement the same seam through their bootstrap adapters.
 *
 * `switchNodeId` is the whole coupled action, wherever it runs: record the new flag, restart,
 * check the restarted controller's flag; on failure put the old flag back and restart again —
 * bounded: the supervisor retries a start a few times, this tries the rollback once.
 */
import {
  LAB_SUPERVISOR_ENV,
  labSupervisorClient,
  type ControllerRestart,
  type ControllerSupervisor,
} from '@fleet/core';

/** How to find a supervisor again from another process (the detached helper). */
export type SupervisorLocator = { readonly kind: 'lab'; readonly socket: string };

/** A supervisor that can be located from another process. */
export interface LocatableSupervisor extends ControllerSupervisor {
  readonly locator: SupervisorLocator;
}

/** A restart of the lab: stop, start again with new flags, on the same port; ~3 cold starts. */
const LAB_RESTART_TIMEOUT_MS = 200_000;

/** The lab supervisor at `socket` (`DIR/nodes/<host>/supervisor.sock`). */
export function labControllerSupervisor(
  socket: string,
  options: { readonly timeoutMs?: number } = {},
): LocatableSupervisor {
  const client = labSupervisorClient(socket, {
    timeoutMs: options.timeoutMs ?? LAB_RESTART_TIMEOUT_MS,
  });
  // The lab records the flag as part of the restart request: kept here until then.
  let recorded: string | undefined;
  return {
    kind: 'lab',
    locator: { kind: 'lab', socket },
    replacesCaller: true,
    recordNodeId(nodeId) {
      recorded = nodeId;
      return Promise.resolve();
    },
    async restart(): Promise<ControllerRestart> {
      const state = await client.restart(recorded === undefined ? {} : { nodeId: recorded });
      return {
        nodeId: state.flags.nodeId,
        pid: state.pid,
        detail: `lab supervisor: controller ${state.pid ?? '?'} runs with --node-id ${state.flags.nodeId}`,
      };
    },
  };
}

/** A supervisor found again from its locator (in the helper's process). */
export function supervisorAt(locator: SupervisorLocator): LocatableSupervisor {
  return labControllerSupervisor(locator.socket);
}

/**
 * The supervisor of the controller this code runs in, from its environment: the lab supervisor
 * when `FLEET_LAB_SUPERVISOR` names its socket; otherwise none is wired yet (systemd and Windows
 * come with their bootstrap adapters) and a node-id change is refused before anything is written.
 */
export function supervisorFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): LocatableSupervisor | undefined {
  const socket = env[LAB_SUPERVISOR_ENV];
  return socket ? labControllerSupervisor(socket) : undefined;
}

export interface SwitchPlan {
  readonly from: string;
  readonly to: string;
}

export interface SwitchOutcome {
  readonly switched: boolean;
  /** What the supervisor reported after the restart that counts (the new one, or the rollback's). */
  readonly restart?: ControllerRestart;
  /** Why the switch failed. */
  readonly error?: string;
  /** Set when the switch failed: whether the rollback restart brought the old flag back. */
  readonly rolledBack?: boolean;
  readonly rollbackError?: string;
}

const why = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Records `to`, restarts, and checks the restarted controller runs with `to`. On failure:
 * `beforeRollback` (the caller puts the identity file back: the old controller checks it at its
 * start), then records `from` and restarts once more.
 */
export async function switchNodeId(
  supervisor: ControllerSupervisor,
  plan: SwitchPlan,
  hooks: { readonly beforeRollback?: () => Promise<void> } = {},
): Promise<SwitchOutcome> {
  let error: string;
  try {
    await supervisor.recordNodeId(plan.to);
    const restart = await supervisor.restart();
    if (restart.nodeId === plan.to) return { switched: true, restart };
    error = `the ${supervisor.kind} supervisor restarted the controller with --node-id ${restart.nodeId}, not ${plan.to}`;
  } catch (failure) {
    error = `the ${supervisor.kind} supervisor could not restart the controller with --node-id ${plan.to}: ${why(failure)}`;
  }
  try {
    await hooks.beforeRollback?.();
    await supervisor.recordNodeId(plan.from);
    const restart = await supervisor.restart();
    if (restart.nodeId !== plan.from) {
      return {
        switched: false,
        error,
        rolledBack: false,
        restart,
        rollbackError: `the rollback restart runs with --node-id ${restart.nodeId}, not ${plan.from}`,
      };
    }
    return { switched: false, error, rolledBack: true, restart };
  } catch (failure) {
    return { switched: false, error, rolledBack: false, rollbackError: why(failure) };
  }
}
