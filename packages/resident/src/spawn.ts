/**
 * Starting a resident operator process (docs/resident.md), shared by `fleet resident start`, which
 * waits until it listens, and a call that found none (`autostart.ts`), which does not. Node's own
 * imports only: a call that starts one pays no more than this module and a fork.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, lstatSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { ResidentPlace } from './place.js';

/** A log over this many bytes is started afresh by the next resident (it keeps a few lines each). */
const LOG_BOUND_BYTES = 1024 * 1024;

/** The resident's log, beside its socket. */
export function residentLog(place: ResidentPlace): string {
  return place.socket.replace(/\.sock$/, '.log');
}

/**
 * Starts `fleet resident serve` of the CLI at `cliRoot` (its `bin/run.js`) detached from this
 * process, in the place's directory, its output appended to its log; the caller decides whether to
 * wait for it. `env` is the resident's own start environment (a call brings its own:
 * docs/resident.md).
 */
export function spawnResident(
  place: ResidentPlace,
  idleMinutes: number,
  cliRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  const logFile = residentLog(place);
  const size = lstatSync(logFile, { throwIfNoEntry: false })?.size ?? 0;
  const log = openSync(logFile, size > LOG_BOUND_BYTES ? 'w' : 'a', 0o600);
  try {
    const child = spawn(
      process.execPath,
      [join(cliRoot, 'bin', 'run.js'), 'resident', 'serve', '--idle-minutes', String(idleMinutes)],
      {
        cwd: place.dir,
        detached: true,
        stdio: ['ignore', log, log],
        env: { ...env, FLEET_RESIDENT: 'off' },
      },
    );
    child.unref();
    return child;
  } finally {
    closeSync(log);
  }
}
