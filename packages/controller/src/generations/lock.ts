/**
 * The runtime lock: one staging, flip or journal writer per node home at a time
 * (`~/.local/state/fleet/runtime.lock`, catalogue 33). The lock file names its holder — pid, the
 * kernel's boot id, the holder's start time, a lock id — and appears whole: it is written to a
 * temp file first and hard-linked into place, so a second caller never reads a half-written
 * lock and takes it for a dead one. A live holder makes the second caller fail at once with
 * `LOCKED`. A lock whose holder is gone — killed (`kill -9`), from before a reboot (another boot
 * id), or whose pid now belongs to another process (another start time) — is stale and taken
 * over: moved aside, and taken only if what was moved is the lock judged stale.
 */
import { randomBytes } from 'node:crypto';
import { constants, readFileSync } from 'node:fs';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from '@fleet/core/zod';
import { FleetError } from '@fleet/core/node';
import { createExclusive, ensurePrivateDir } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { statePaths, TEMP_PREFIX } from '../state-paths.js';

export const RUNTIME_LOCK = 'runtime.lock';

export function runtimeLockPath(home: string): string {
  return join(statePaths(home).root, RUNTIME_LOCK);
}

/** What the lock file says about its holder. */
export interface LockOwner {
  readonly pid: number;
  /** `/proc/sys/kernel/random/boot_id` when it was taken (`null`: not known, e.g. not Linux). */
  readonly bootId: string | null;
  /** The holder's start time, clock ticks after boot (`/proc/<pid>/stat`), `null`: not known. */
  readonly started: number | null;
  /** Unique to one taking of the lock. */
  readonly lockId: string;
}

const ownerSchema = z.strictObject({
  pid: z.number().int().positive(),
  bootId: z.string().nullable(),
  started: z.number().int().nonnegative().nullable(),
  lockId: z.string().min(1),
  at: z.string(),
});

/** The holder a lock file names; a bare pid is the format of earlier versions. */
export function parseLockOwner(text: string): LockOwner | undefined {
  if (/^\d+\n?$/.test(text)) {
    return { pid: Number.parseInt(text, 10), bootId: null, started: null, lockId: text };
  }
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** What this machine says now, to judge a lock by. */
export interface HostProbe {
  readonly bootId: string | null;
  alive(pid: number): boolean;
  started(pid: number): number | null;
}

/**
 * Pure: is the lock's holder still the process that took it? Not after a reboot (another boot
 * id), not when no process has its pid, not when the process with its pid started at another
 * time (the pid was reused). What is not known (off Linux) does not count against it.
 */
export function holderAlive(owner: LockOwner, host: HostProbe): boolean {
  if (owner.bootId !== null && host.bootId !== null && owner.bootId !== host.bootId) return false;
  if (!host.alive(owner.pid)) return false;
  if (owner.started === null) return true;
  const started = host.started(owner.pid);
  return started === null || started === owner.started;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export const thisHost: HostProbe = {
  bootId: readOrNull('/proc/sys/kernel/random/boot_id')?.trim() ?? null,
  alive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  started(pid) {
    const stat = readOrNull(`/proc/${pid}/stat`);
    if (stat === null) return null;
    // Field 22 (starttime); fields 3 on follow the command name, which may hold spaces.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  },
};

/** The pid of a live holder of the runtime lock, or `null`. */
export async function runtimeLockHolder(home: string): Promise<number | null> {
  const text = await readFile(runtimeLockPath(home), 'utf8').catch(() => null);
  const owner = text === null ? undefined : parseLockOwner(text);
  return owner !== undefined && holderAlive(owner, thisHost) ? owner.pid : null;
}

const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** Puts the complete lock file `temp` in place at `path`; false when `path` exists. */
async function place(temp: string, path: string, text: string): Promise<boolean> {
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    if (!NO_HARD_LINKS.has(errnoOf(error) ?? '')) throw error;
  }
  // No hard links here: created exclusively and written (a reader may see it half-written).
  try {
    const handle = await open(
      path,
      constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY,
      0o600,
    );
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    throw error;
  }
}

/** Removes the stale lock `text` from `path`, unless another process took it over meanwhile. */
async function takeOver(path: string, text: string): Promise<void> {
  const aside = join(dirname(path), `${TEMP_PREFIX}stale-lock-${randomBytes(6).toString('hex')}`);
  try {
    await rename(path, aside);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return; // released meanwhile
    throw error;
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  if (moved !== text) {
    // A fresh lock of another process, moved by mistake: it goes back, and it holds.
    await link(aside, path).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
    throw new FleetError('LOCKED', `another runtime operation took ${RUNTIME_LOCK} just now`);
  }
  await unlink(aside);
}

async function acquire(path: string): Promise<LockOwner> {
  const mine: LockOwner = {
    pid: process.pid,
    bootId: thisHost.bootId,
    started: thisHost.started(process.pid),
    lockId: randomBytes(12).toString('hex'),
  };
  const text = `${JSON.stringify({ ...mine, at: new Date().toISOString() })}\n`;
  // Beside the lock, named like every temp file: one a crash leaves is swept at the next start.
  const staged = join(dirname(path), `${TEMP_PREFIX}lock-${mine.lockId}`);
  await createExclusive(staged, text);
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (await place(staged, path, text)) return mine;
      const held = await readFile(path, 'utf8').catch(() => null);
      if (held === null) continue; // released meanwhile
      const owner = parseLockOwner(held);
      if (owner === undefined) {
        throw new FleetError(
          'LOCKED',
          `${RUNTIME_LOCK} is unreadable; if no runtime operation is running on this node, remove it`,
        );
      }
      if (holderAlive(owner, thisHost)) {
        throw new FleetError(
          'LOCKED',
          owner.pid === process.pid
            ? `this process already holds ${RUNTIME_LOCK}`
            : `another runtime operation (pid ${owner.pid}) holds ${RUNTIME_LOCK}`,
        );
      }
      await takeOver(path, held);
    }
    throw new FleetError('LOCKED', `could not take ${RUNTIME_LOCK}`);
  } finally {
    await unlink(staged).catch(() => undefined);
  }
}

/** Runs `fn` holding the runtime lock of `home`. */
export async function withRuntimeLock<T>(home: string, fn: () => Promise<T>): Promise<T> {
  await ensurePrivateDir(home, statePaths(home).root);
  const path = runtimeLockPath(home);
  const mine = await acquire(path);
  try {
    return await fn();
  } finally {
    // Only our own lock: one judged stale and taken over is someone else's now.
    const held = await readFile(path, 'utf8').catch(() => null);
    if (held !== null && parseLockOwner(held)?.lockId === mine.lockId) {
      await unlink(path).catch(() => undefined);
    }
  }
}
