/**
 * core's `ControllerSupervisor` seam (transport-identity, contract §10.2) provided by a bootstrap
 * adapter for one node: `recordNodeId` rewrites the installed definition with the new `--node-id`
 * (and makes the supervisor read it), `restart` restarts through the supervisor and resolves once
 * the restarted controller runs with the recorded id and accepts connections on its port — or
 * rejects when it failed, or did not within the timeout.
 */
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { FleetError } from '../errors.js';
import type { BootstrapAdapter, ObservedSupervisor } from '../interfaces/bootstrap.js';
import type { NodeContext } from '../interfaces/node-context.js';
import type { ControllerRestart, ControllerSupervisor } from '../interfaces/supervisor.js';
import { argvFlag } from './layout.js';

export interface AdapterSupervisorOptions {
  /**
   * True (the default) when the caller is the supervised controller itself: its restart replaces
   * the calling process, so the caller runs it from elsewhere (transport-identity's helper).
   */
  readonly replacesCaller?: boolean;
  /** How long a restarted controller has to run and accept connections (default 60 s). */
  readonly timeoutMs?: number;
  readonly pollMs?: number;
}

/** The port and address the controller of `command` listens on (`controller serve` defaults). */
export function controllerEndpoint(command: readonly string[]): {
  readonly host: string;
  readonly port: number;
} {
  const bind = argvFlag(command, '--bind') ?? '127.0.0.1';
  const port = Number.parseInt(argvFlag(command, '--port') ?? '7701', 10);
  return { host: bind === '0.0.0.0' ? '127.0.0.1' : bind === '::' ? '::1' : bind, port };
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Waits until the supervised controller runs and accepts connections (port 0: running suffices). */
export async function waitForController(
  adapter: Pick<BootstrapAdapter, 'observe' | 'supervisor'>,
  ctx: NodeContext,
  options: { readonly timeoutMs?: number; readonly pollMs?: number } = {},
): Promise<ObservedSupervisor> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  // Bounded twice: by the context's monotonic clock, and by a number of polls (a fixed test clock
  // never advances).
  const deadline = ctx.clock.monotonicMs() + timeoutMs;
  const attempts = Math.max(1, Math.ceil(timeoutMs / (options.pollMs ?? 200)));
  let last: ObservedSupervisor | undefined;
  for (
    let attempt = 0;
    attempt < attempts && (attempt === 0 || ctx.clock.monotonicMs() < deadline);
    attempt += 1
  ) {
    last = await adapter.observe(ctx);
    if (!last.running && /fail/i.test(last.state)) {
      throw new FleetError(
        'ACTION_FAILED',
        `the ${adapter.supervisor} supervisor reports the controller ${last.state}`,
      );
    }
    if (last.running) {
      const endpoint = controllerEndpoint(last.command ?? []);
      if (endpoint.port === 0 || (await accepts(endpoint.host, endpoint.port))) return last;
    }
    await sleep(options.pollMs ?? 200);
  }
  throw new FleetError(
    'ACTION_FAILED',
    `the controller did not come up under ${adapter.supervisor} within ${timeoutMs} ms (${last?.state ?? 'not observed'})`,
  );
}

export function adapterControllerSupervisor(
  adapter: Pick<BootstrapAdapter, 'supervisor' | 'recordNodeId' | 'restart' | 'observe'>,
  ctx: NodeContext,
  options: AdapterSupervisorOptions = {},
): ControllerSupervisor {
  return {
    kind: adapter.supervisor,
    replacesCaller: options.replacesCaller ?? true,
    async recordNodeId(nodeId: string): Promise<void> {
      await adapter.recordNodeId(ctx, nodeId);
    },
    async restart(): Promise<ControllerRestart> {
      await adapter.restart(ctx);
      const observed = await waitForController(adapter, ctx, options);
      if (observed.nodeIdFlag === undefined) {
        throw new FleetError(
          'ACTION_FAILED',
          `the ${adapter.supervisor} supervisor runs a controller without --node-id`,
        );
      }
      return {
        nodeId: observed.nodeIdFlag,
        pid: observed.pid ?? null,
        detail: `${adapter.supervisor}: controller ${observed.pid ?? '?'} runs generation ${observed.generation?.slice(0, 12) ?? '?'} with --node-id ${observed.nodeIdFlag}`,
      };
    },
  };
}

// ---- the coupled `--node-id` switch (contract §10.2) --------------------------------------------

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
 * The whole coupled action, wherever it runs (in the install for a supervisor that restarts
 * another process, in a process of its own for one that replaces the caller): records `to`,
 * restarts, and checks the restarted controller runs with `to`. On failure: `beforeRollback` (the
 * caller puts the identity file back: the old controller checks it at its start), then records
 * `from` and restarts once more — bounded: the supervisor retries a start a few times, this tries
 * the rollback once.
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
