/**
 * Starting a node-local fleet process that must outlive a restart of this controller — the
 * runtime runner (contract §12) and the `--node-id` switch (contract §10.2) — where that restart
 * cannot end it (docs/runtime-lifecycle.md, "The runner leaves the cgroup"):
 *
 * - the node's supervisor adapter starts it apart from the controller when it can
 *   (`launchDetached`: systemd-user runs a transient unit of the user manager, whose control
 *   group a restart of the controller's unit does not touch; windows-task a task of its own,
 *   outside the controller task's job object; launchd a job of its own, which a bootout of the
 *   controller's agent does not end);
 * - otherwise — an adapter without `launchDetached` (the lab supervisor ends only the
 *   controller's own process), or one that says a child is safe from where this runs (an SSH
 *   session, an operator's shell) — a detached child of this process, in its own session;
 * - an adapter that can do neither refuses, and nothing has started.
 *
 * Which supervisor: the one the node recorded (`supervisor.json`), else the one the transaction
 * is about to install (a first bootstrap through the recovery receiver).
 */
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import {
  FleetError,
  readSupervisorRecord,
  type BootstrapAdapter,
  type NodeContext,
  type Registry,
  type SupervisorKind,
} from '@fleet/core/node';
import { ExecaProcessRunner } from '../process-runner.js';

export interface NodeJob {
  /** Unique on the node: `fleet-runtime-<txn>`, `fleet-node-id-<operation>`. */
  readonly name: string;
  /** Its kind, one at a time per node: `runtime-runner`, `node-id-switch`. */
  readonly slot: string;
  /** The fleet CLI's arguments (after `<node> <this runtime's bin/run.js>`). */
  readonly args: readonly string[];
  /** Where its stdout and stderr are appended (0600). */
  readonly log: string;
}

export interface StartedJob {
  /** Its pid, when known at once (Task Scheduler reports none: the job writes a pid file). */
  readonly pid: number | null;
  /** How it was started, for logs and messages. */
  readonly via: string;
}

/** Variables the service manager sets for one unit's processes: never carried to another unit. */
const PER_UNIT =
  /^(INVOCATION_ID|JOURNAL_STREAM|NOTIFY_SOCKET|MANAGERPID|MAINPID|SYSTEMD_EXEC_PID|LISTEN_(PID|FDS|FDNAMES)|WATCHDOG_(PID|USEC)|MONITOR_.*|TRIGGER_.*)$/;

/** This process's environment as a job gets it (the per-unit variables left out). */
export function jobEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !PER_UNIT.test(name)) out[name] = value;
  }
  return out;
}

/** The script this runtime runs from (its `bin/run.js`). */
export function runtimeScript(): string {
  const script = process.argv[1];
  if (!script)
    throw new FleetError('INTERNAL', 'cannot tell which runtime script runs this controller');
  return script;
}

/** The adapter of the node's recorded supervisor, else of `fallback`; `null` for none. */
export async function launchingAdapter(
  registry: Registry,
  home: string,
  fallback: string | null,
): Promise<BootstrapAdapter | null> {
  const record = await readSupervisorRecord(home);
  const kind = record?.supervisor ?? fallback;
  if (kind === null || kind === 'none') return null;
  try {
    return await registry.bootstrapAdapter(kind as SupervisorKind);
  } catch {
    return null;
  }
}

/** Starts `job` out of reach of the controller's restart (see the file comment). */
export async function launchNodeJob(
  adapter: BootstrapAdapter | null,
  ctx: NodeContext,
  job: NodeJob,
): Promise<StartedJob> {
  const argv = [process.execPath, runtimeScript(), ...job.args];
  const env = jobEnvironment();
  if (adapter?.launchDetached) {
    // The job is fleet's own process, not a domain's child: it gets this controller's environment
    // (FLEET_* included), as the detached child below does. A node context's runner drops FLEET_*
    // and secret values from what it passes on (context.ts `withoutSecrets`), which would start
    // the job without them; the adapter gets a runner that passes the job's environment as is.
    const launchCtx: NodeContext = { ...ctx, processes: new ExecaProcessRunner(ctx.home) };
    const launched = await adapter.launchDetached(launchCtx, {
      name: job.name,
      slot: job.slot,
      argv,
      cwd: ctx.home,
      env,
      log: job.log,
    });
    if (launched.started === 'supervisor') return { pid: launched.pid, via: launched.detail };
  }
  const handle = await open(job.log, 'a', 0o600);
  try {
    const child = spawn(argv[0] as string, argv.slice(1), {
      detached: true,
      stdio: ['ignore', handle.fd, handle.fd],
      cwd: ctx.home,
      env,
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid as number));
      child.once('error', reject);
    });
    child.unref();
    return { pid, via: 'a detached child of its own session' };
  } finally {
    await handle.close();
  }
}
