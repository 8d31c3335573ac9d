/**
 * The reconcile's files in the operator's state directory (core's `operatorStateDir`:
 * `$XDG_STATE_HOME/fleet`, else `~/.local/state/fleet`), each mode 0600 in a 0700 directory and
 * replaced atomically (temp file created exclusively beside it, fsync, rename, fsync the
 * directory):
 *
 * - `harness-reconcile.json`: the state ({@link ReconcileState});
 * - `harness-reconcile.log`: the rolling log, the last 500 lines;
 * - `harness-reconcile.lock`: held for the length of a run, so a scheduled run and an operator's
 *   run never interleave their reads and writes of the state (the second gets `LOCKED`, exit 3).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
// The operator's state directory, beside its log (core's main entry, not the plugin API: this
// module is operator-side, read by the command and the `fleet:status` hook, never by a controller).
import { operatorStateDir } from '@fleet/core';
import { FleetError, parseStrictJson } from '@fleet/core/plugin';
import { stateProblem, trimLog, type ReconcileState } from './state.js';

export const STATE_FILE = 'harness-reconcile.json';
export const LOG_FILE = 'harness-reconcile.log';
export const LOCK_FILE = 'harness-reconcile.lock';

export interface ReconcilePaths {
  readonly dir: string;
  readonly state: string;
  readonly log: string;
  readonly lock: string;
}

export function reconcilePaths(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ReconcilePaths {
  const dir = operatorStateDir(env);
  return {
    dir,
    state: join(dir, STATE_FILE),
    log: join(dir, LOG_FILE),
    lock: join(dir, LOCK_FILE),
  };
}

async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

/** Replaces `path` with `text`: exclusive 0600 temp file beside it, fsync, rename, fsync the directory. */
export async function writeAtomic(path: string, text: string): Promise<void> {
  const dir = join(path, '..');
  await ensureDir(dir);
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  if (process.platform !== 'win32') {
    const directory = await open(dir, 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  }
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export interface LoadedState {
  readonly state: ReconcileState | null;
  /** Set when a state file existed but could not be used (it is moved aside, not trusted). */
  readonly problem?: string;
  readonly movedTo?: string;
}

/**
 * The previous state, or `null` when there is none. A damaged state file is moved aside
 * (`harness-reconcile.json.damaged-<time>`) and reported, never silently overwritten: the run then
 * starts from no memory, which loses first-seen times but never writes anything it should not.
 */
export async function loadState(paths: ReconcilePaths, now: Date): Promise<LoadedState> {
  const text = await readText(paths.state);
  if (text === null) return { state: null };
  let problem: string | null;
  let value: unknown;
  try {
    value = parseStrictJson(text, paths.state, 'USAGE');
    problem = stateProblem(value);
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  // A state written before `deleted` and `modified` existed has neither list: none.
  if (problem === null)
    return {
      state: { deleted: [], modified: [], ...(value as Partial<ReconcileState>) } as ReconcileState,
    };
  const movedTo = `${paths.state}.damaged-${now.toISOString().replace(/[-:.]/g, '')}`;
  await rename(paths.state, movedTo);
  return { state: null, problem, movedTo };
}

/**
 * The state for a reader that changes nothing (`fleet status`): like {@link loadState}, but a
 * damaged file is only reported, never moved aside.
 */
export async function peekState(paths: ReconcilePaths): Promise<LoadedState> {
  const text = await readText(paths.state);
  if (text === null) return { state: null };
  try {
    const value = parseStrictJson(text, paths.state, 'USAGE');
    const problem = stateProblem(value);
    return problem === null ? { state: value as ReconcileState } : { state: null, problem };
  } catch (error) {
    return { state: null, problem: error instanceof Error ? error.message : String(error) };
  }
}

export async function saveState(paths: ReconcilePaths, state: ReconcileState): Promise<void> {
  await writeAtomic(paths.state, `${JSON.stringify(state, null, 2)}\n`);
}

/** Appends lines to the rolling log, keeping the last `max` (rewritten atomically, 0600). */
export async function appendLog(
  paths: ReconcilePaths,
  lines: readonly string[],
  max?: number,
): Promise<void> {
  const existing = (await readText(paths.log)) ?? '';
  await writeAtomic(paths.log, trimLog(existing, lines, max));
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the run lock; returns its release. A lock whose process is gone (a run that was killed)
 * is taken over; a live one refuses with `LOCKED` (exit 3).
 */
export async function acquireLock(paths: ReconcilePaths, now: Date): Promise<() => Promise<void>> {
  await ensureDir(paths.dir);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(paths.lock, 'wx', 0o600);
      try {
        await handle.writeFile(
          `${JSON.stringify({ pid: process.pid, since: now.toISOString() })}\n`,
        );
      } finally {
        await handle.close();
      }
      return () => rm(paths.lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder: { pid?: unknown; since?: unknown } = {};
    try {
      holder = JSON.parse((await readText(paths.lock)) ?? '{}') as typeof holder;
    } catch {
      // An unreadable lock is as good as an abandoned one.
    }
    if (typeof holder.pid === 'number' && holder.pid !== process.pid && pidAlive(holder.pid)) {
      throw new FleetError(
        'LOCKED',
        `another harness reconcile is running (pid ${holder.pid}, since ${String(holder.since)}); lock ${paths.lock}`,
        {
          suggestions: [
            'wait for it to finish; remove the lock only if that process is not a fleet run',
          ],
        },
      );
    }
    await rm(paths.lock, { force: true });
  }
  throw new FleetError('LOCKED', `could not take the reconcile lock ${paths.lock}`);
}
