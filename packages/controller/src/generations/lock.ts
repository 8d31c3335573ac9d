/**
 * The runtime lock: one staging, flip or journal writer per node home at a time
 * (`~/.local/state/fleet/runtime.lock`, created exclusively, holding the holder's pid). A lock
 * whose holder is dead (a crash) is taken over; a live holder makes the second caller fail at
 * once with `LOCKED`.
 */
import { constants } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FleetError } from '@fleet/core';
import { ensurePrivateDir } from '../fs/durable.js';
import { statePaths } from '../state-paths.js';

export const RUNTIME_LOCK = 'runtime.lock';

export function runtimeLockPath(home: string): string {
  return join(statePaths(home).root, RUNTIME_LOCK);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of a live holder of the runtime lock, or `null`. */
export async function runtimeLockHolder(home: string): Promise<number | null> {
  try {
    const pid = Number.parseInt((await readFile(runtimeLockPath(home), 'utf8')).trim(), 10);
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : null;
  } catch {
    return null;
  }
}

async function acquire(path: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(
        path,
        constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY,
        0o600,
      );
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const text = await readFile(path, 'utf8').catch(() => '');
      const pid = Number.parseInt(text.trim(), 10);
      if (Number.isInteger(pid) && pid > 0 && alive(pid) && pid !== process.pid) {
        throw new FleetError(
          'LOCKED',
          `another runtime operation (pid ${pid}) holds ${RUNTIME_LOCK}`,
        );
      }
      if (pid === process.pid) {
        throw new FleetError('LOCKED', `this process already holds ${RUNTIME_LOCK}`);
      }
      await unlink(path).catch(() => undefined); // a dead holder's lock
    }
  }
  throw new FleetError('LOCKED', `could not take ${RUNTIME_LOCK}`);
}

/** Runs `fn` holding the runtime lock of `home`. */
export async function withRuntimeLock<T>(home: string, fn: () => Promise<T>): Promise<T> {
  await ensurePrivateDir(home, statePaths(home).root);
  const path = runtimeLockPath(home);
  await acquire(path);
  try {
    return await fn();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}
