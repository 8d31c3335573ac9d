/**
 * Starting the runtime runner (contract §12): `controller runtime-run` of this same runtime's CLI,
 * started where a restart of the controller cannot end it (launch.ts: a transient unit of the user
 * manager, a task of its own, or a detached child where that is safe). Its output goes to
 * `~/.local/state/fleet/journal/runner-<txn>.log` (0600), kept with the journal as evidence.
 *
 * It waits for its go before it changes anything: `runner-<txn>.go`, written by the controller
 * once its answer has been flushed — or the end of the process that started it (the recovery
 * receiver's end is the end of the SSH session). It writes its pid to `runner-<txn>.pid` first
 * thing, which is how its pid is known when the supervisor reports none.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FleetError, type Registry } from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { ensurePrivateDir } from '../fs/durable.js';
import { statePaths } from '../state-paths.js';
import { launchingAdapter, launchNodeJob } from './launch.js';

export interface RunnerStart {
  readonly pid: number;
  readonly log: string;
  /** How it was started (`the transient unit … of the user manager`, …). */
  readonly via: string;
  /** Lets the runner begin (after the answer went out). */
  go(): Promise<void>;
  /** Ends the runner before its go, when the request it was started for is not done after all. */
  cancel(): void;
}

export interface RunnerArgs {
  readonly home: string;
  readonly nodeId: string;
  readonly registry: Registry;
  /** The supervisor the transaction installs (used when the node records none yet). */
  readonly supervisor: string | null;
  readonly mode: 'activate' | 'rollback' | 'resume';
  readonly transaction: string;
  readonly acceptanceTimeoutMs?: number;
}

/** How long a started runner has to write its pid file. */
const PID_FILE_TIMEOUT_MS = 30_000;

/** The runner's files beside the journal. */
export function runnerFiles(home: string, transaction: string) {
  const dir = statePaths(home).journal;
  return {
    dir,
    log: join(dir, `runner-${transaction}.log`),
    go: join(dir, `runner-${transaction}.go`),
    pid: join(dir, `runner-${transaction}.pid`),
  };
}

async function waitForPidFile(path: string, log: string): Promise<number> {
  const until = Date.now() + PID_FILE_TIMEOUT_MS;
  for (;;) {
    const pid = Number.parseInt((await readFile(path, 'utf8').catch(() => '')).trim(), 10);
    if (Number.isInteger(pid) && pid > 0) return pid;
    if (Date.now() > until) {
      throw new FleetError(
        'ACTION_FAILED',
        `the runner did not start within ${PID_FILE_TIMEOUT_MS / 1000} s (no ${path}); see ${log}`,
      );
    }
    await sleep(100);
  }
}

export async function spawnRunner(args: RunnerArgs): Promise<RunnerStart> {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(args.transaction)) {
    throw new FleetError('BAD_REQUEST', `${JSON.stringify(args.transaction)} cannot name a runner`);
  }
  const files = runnerFiles(args.home, args.transaction);
  await ensurePrivateDir(args.home, files.dir);
  await rm(files.go, { force: true });
  await rm(files.pid, { force: true });
  const adapter = await launchingAdapter(args.registry, args.home, args.supervisor);
  const ctx = createNodeContext({ home: args.home, nodeId: args.nodeId });
  const started = await launchNodeJob(adapter, ctx, {
    name: `fleet-runtime-${args.transaction}-${randomBytes(3).toString('hex')}`,
    slot: 'runtime-runner',
    args: [
      'controller',
      'runtime-run',
      '--home',
      args.home,
      '--mode',
      args.mode,
      '--transaction',
      args.transaction,
      ...(args.acceptanceTimeoutMs === undefined
        ? []
        : ['--acceptance-timeout-ms', String(args.acceptanceTimeoutMs)]),
      '--go-file',
      files.go,
      '--wait-pid',
      String(process.pid),
      '--pid-file',
      files.pid,
      '--log-file',
      files.log,
    ],
    log: files.log,
  });
  const pid = started.pid ?? (await waitForPidFile(files.pid, files.log));
  return {
    pid,
    log: files.log,
    via: started.via,
    go: () => writeFile(files.go, '', { mode: 0o600 }),
    // SIGKILL before the go: the runner has changed nothing yet (it waits for its go first).
    // Its unit or task ends with it, and the transaction stays at staged.
    cancel: () => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}
