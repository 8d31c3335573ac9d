/**
 * The seam between a domain that restarts the controller (transport-identity, contract §10.2) and the
 * supervisor that runs it — a systemd user unit, a Windows scheduled task, the lab supervisor —
 * through that supervisor's bootstrap adapter. The controller hands a domain the supervisor the
 * node recorded (`NodeContext.controllerSupervisor`), never one a request names. Plain structural
 * types: a user-installed plugin has its own copy of `@fleet/core`.
 */

/** What a supervisor reports once the restarted controller accepts requests. */
export interface ControllerRestart {
  /** The `--node-id` the restarted controller runs with, as the supervisor recorded it. */
  readonly nodeId: string;
  readonly pid?: number | null;
  readonly detail?: string;
}

export interface ControllerSupervisor {
  /** `lab`, `systemd-user`, `windows-task`, … (for messages). */
  readonly kind: string;
  /**
   * True when `restart` replaces the very process calling it (the controller asking its own
   * supervisor): the restart must then be run from outside that process, after the answer.
   */
  readonly replacesCaller: boolean;
  /** Records the `--node-id` the next start uses (unit ExecStart, task arguments, lab flags). */
  recordNodeId(nodeId: string): Promise<void>;
  /**
   * Restarts the controller with the recorded flags; resolves once the new controller accepts
   * requests, rejects when it did not start (after the supervisor's own bounded retries).
   */
  restart(): Promise<ControllerRestart>;
  /**
   * For a supervisor that replaces the caller: starts the whole switch — record `to`, restart,
   * check the restarted controller runs with it; on failure record `from` and restart again —
   * in a process of its own, out of the restart's reach, and returns once it has started (the
   * controller that comes up settles the operation). Absent when the switch cannot be run from
   * outside the caller.
   */
  switchFromOutside?(plan: {
    readonly from: string;
    readonly to: string;
    readonly operationId: string;
  }): Promise<void>;
}
