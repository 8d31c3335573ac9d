import {
  FleetError,
  switchNodeId,
  type ControllerRestart,
  type ControllerSupervisor,
  type SwitchOutcome,
} from '@fleet/core';

export interface RecordedSupervisorOptions {
  /** The `--node-id` the supervised controller runs with at first. */
  readonly nodeId: string;
  /**
   * Whether `restart` replaces the process that asks for it, as a node's own supervisor does
   * (default false: the restart is observed in-process, the easiest to test). Such a supervisor
   * also has `switchFromOutside`, which runs the switch at once, in-process, and records it.
   */
  readonly replacesCaller?: boolean;
}

/**
 * A fake controller supervisor (core's `ControllerSupervisor` seam) that records every call and
 * runs nothing: a restart "starts" the controller with the recorded `--node-id`, unless a test
 * said a start with that id fails — the catalogue's "a process that exits 1 when started with the
 * new flag" (restart-loop guard). `calls` reads like a supervisor log:
 * `['record node-02', 'restart node-02', 'record node-01', 'restart node-01']`; a switch run from
 * outside (`switchFromOutside`, for `replacesCaller`) is logged first as `switch node-01 -> node-02`
 * and its outcome kept in `outside`.
 */
export class RecordedSupervisor implements ControllerSupervisor {
  readonly kind = 'recorded';
  readonly replacesCaller: boolean;
  readonly calls: string[] = [];
  /** The `--node-id` the controller runs with now; `null` while none runs (a start failed). */
  running: string | null;
  private recorded: string;
  private pid = 1000;
  private readonly failing = new Set<string>();

  /** The outcome of each switch run through `switchFromOutside`. */
  readonly outside: SwitchOutcome[] = [];
  readonly switchFromOutside?: (plan: {
    readonly from: string;
    readonly to: string;
    readonly operationId: string;
  }) => Promise<void>;

  constructor(options: RecordedSupervisorOptions) {
    this.running = options.nodeId;
    this.recorded = options.nodeId;
    this.replacesCaller = options.replacesCaller ?? false;
    if (this.replacesCaller) {
      this.switchFromOutside = async (plan) => {
        this.calls.push(`switch ${plan.from} -> ${plan.to}`);
        this.outside.push(await switchNodeId(this, plan));
      };
    }
  }

  /** Every start with this `--node-id` fails from now on. */
  failStartWith(nodeId: string): this {
    this.failing.add(nodeId);
    return this;
  }

  recordNodeId(nodeId: string): Promise<void> {
    this.calls.push(`record ${nodeId}`);
    this.recorded = nodeId;
    return Promise.resolve();
  }

  restart(): Promise<ControllerRestart> {
    this.calls.push(`restart ${this.recorded}`);
    if (this.failing.has(this.recorded)) {
      this.running = null;
      return Promise.reject(
        new FleetError(
          'ACTION_FAILED',
          `the controller exited (code 1) before accepting requests with --node-id ${this.recorded}`,
        ),
      );
    }
    this.running = this.recorded;
    this.pid += 1;
    return Promise.resolve({
      nodeId: this.recorded,
      pid: this.pid,
      detail: `recorded supervisor: pid ${this.pid}`,
    });
  }
}
