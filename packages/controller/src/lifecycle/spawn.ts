/**
 * Starting the runtime runner from the controller (contract §12): a detached process running this
 * same runtime's CLI (`controller runtime-run`), so it survives the restart of the controller
 * that starts it. Its output goes to `~/.local/state/fleet/journal/runner-<txn>.log` (0600), kept
 * with the journal as evidence. It waits for its go — sent once the controller's answer has been
 * flushed, or implied when the controller's end of the pipe closes — before it changes anything.
 */
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { FleetError } from '@fleet/core';
import { ensurePrivateDir } from '../fs/durable.js';
import { statePaths } from '../state-paths.js';

export interface RunnerStart {
  readonly pid: number;
  readonly log: string;
  /** Lets the runner begin (after the answer went out). */
  go(): void;
}

export interface RunnerArgs {
  readonly home: string;
  readonly mode: 'activate' | 'rollback';
  readonly transaction: string;
  readonly acceptanceTimeoutMs?: number;
}

export async function spawnRunner(args: RunnerArgs): Promise<RunnerStart> {
  const script = process.argv[1];
  if (!script)
    throw new FleetError('INTERNAL', 'cannot tell which runtime script runs this controller');
  const journalDir = statePaths(args.home).journal;
  await ensurePrivateDir(args.home, journalDir);
  const log = join(journalDir, `runner-${args.transaction}.log`);
  const handle = await open(log, 'a', 0o600);
  try {
    const argv = [
      script,
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
    ];
    const child = spawn(process.execPath, argv, {
      detached: true,
      stdio: ['pipe', handle.fd, handle.fd],
      cwd: args.home,
      env: process.env,
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid as number));
      child.once('error', reject);
    });
    child.unref();
    const stdin = child.stdin;
    stdin?.on('error', () => undefined);
    // Not keeping this process alive: when it ends without a go, the runner's stdin ends (a go).
    (stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return {
      pid,
      log,
      go: () => {
        stdin?.end('go\n');
      },
    };
  } finally {
    await handle.close();
  }
}
