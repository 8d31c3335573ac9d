/**
 * The audit log's append lock (docs/audit-log.md, "Writers"): `audit.lock` in the state directory,
 * held by whoever appends — the controller for each group of records, the SSH recovery receiver
 * (`fleet bootstrap receive`) for its stage and activate records — so two processes never write
 * the active segment at once and the chain stays one chain. The controller takes it for every
 * group and, holding it, adopts what another fleet writer appended since (log.ts
 * `adoptAppended`).
 *
 * The lock is a symlink whose target names its holder — pid, start time, the boot id's first 8
 * characters, a lock id (as the runtime lock's file does, generations/lock.ts) — so it appears
 * whole in one step and needs no data block: on a full disk the append itself is still attempted
 * and cut back (catalogue 25), instead of the lock failing first. Where symlinks cannot be made
 * (Windows without the privilege) it is a file created exclusively, with the same text. A second
 * writer waits — an append takes milliseconds — and gives up with `AUDIT_UNAVAILABLE` after a
 * bound; a lock whose holder is gone (killed, before a reboot, a reused pid) is stale and taken
 * over. No fsync: a lock left by a crash names a dead holder or another boot, which is all a
 * later writer needs to judge it.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readFile, readlink, rename, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FleetError } from '@fleet/core/node';
import { errnoOf } from '../fs/errors.js';
import { holderAlive, thisHost, type LockOwner } from '../generations/lock.js';
import { TEMP_PREFIX } from '../state-paths.js';

export const AUDIT_LOCK = 'audit.lock';

/** How long a writer waits for another's append before it answers `AUDIT_UNAVAILABLE`. */
const WAIT_MS = 10_000;
/** A lock file still empty or unreadable after this long was left by a crash mid-creation. */
const UNREADABLE_STALE_MS = 10_000;
const POLL_MS = 2;

const NO_SYMLINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** `pid:started:boot8:lockId`, the symlink's target. */
function ownerText(owner: LockOwner): string {
  return `${owner.pid}:${owner.started ?? '-'}:${owner.bootId?.slice(0, 8) ?? '-'}:${owner.lockId}`;
}

/** The holder a lock names; `undefined` for anything else. */
export function parseOwnerText(text: string): LockOwner | undefined {
  const match = /^(\d+):(\d+|-):([0-9a-f-]{1,8}|-):([0-9a-f]{24})$/.exec(text);
  if (!match) return undefined;
  const boot = match[3] as string;
  return {
    pid: Number(match[1]),
    started: match[2] === '-' ? null : Number(match[2]),
    // Held against this boot's id by its prefix: the same boot, or another one.
    bootId: boot === '-' ? null : thisHost.bootId?.startsWith(boot) ? thisHost.bootId : boot,
    lockId: match[4] as string,
  };
}

/** What the lock says: a symlink's target, or a file's text; `null` when there is none. */
async function readLock(path: string): Promise<string | null> {
  try {
    return await readlink(path);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    return readFile(path, 'utf8').catch(() => null);
  }
}

/** Makes the lock in one step, or reports that it exists. */
async function place(path: string, text: string): Promise<boolean> {
  try {
    await symlink(text, path);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    if (!NO_SYMLINKS.has(errnoOf(error) ?? '')) throw error;
  }
  return placeFile(path, text);
}

/** Creates the lock file whole, or reports that it exists; a failed write leaves no file. */
async function placeFile(path: string, text: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(
      path,
      constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(text);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return true;
}

/** Moves a stale lock aside and removes it, unless another writer replaced it meanwhile. */
async function takeOver(path: string, held: string): Promise<void> {
  const aside = `${path}.${TEMP_PREFIX}stale-${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  const moved = (await readLock(aside)) ?? '';
  if (moved !== held) {
    // A fresh lock of another writer, moved by mistake: it goes back (never over a newer one).
    await rename(aside, path).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}

/** Whether a lock file that names no holder is old enough to have been left by a crash. */
async function unreadableAndOld(path: string, now: number): Promise<boolean> {
  const stats = await lstat(path).catch(() => undefined);
  return stats !== undefined && now - stats.mtimeMs > UNREADABLE_STALE_MS;
}

async function acquire(path: string): Promise<LockOwner> {
  const mine: LockOwner = {
    pid: process.pid,
    bootId: thisHost.bootId,
    started: thisHost.started(process.pid),
    lockId: randomBytes(12).toString('hex'),
  };
  const text = ownerText(mine);
  const deadline = Date.now() + WAIT_MS;
  let holder = 'another writer';
  for (;;) {
    if (await place(path, text)) return mine;
    const held = await readLock(path);
    if (held !== null) {
      const owner = parseOwnerText(held);
      if (owner !== undefined && !holderAlive(owner, thisHost)) {
        await takeOver(path, held);
        continue;
      } else if (owner === undefined && (await unreadableAndOld(path, Date.now()))) {
        await takeOver(path, held);
        continue;
      }
      if (owner !== undefined) holder = `pid ${owner.pid}`;
    }
    if (Date.now() > deadline) {
      throw new FleetError(
        'AUDIT_UNAVAILABLE',
        `the audit log is unavailable (${AUDIT_LOCK} held by ${holder} for more than ${WAIT_MS / 1000} s); nothing was done`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** Runs `fn` holding the append lock of the audit log in `dir`. */
export async function withAuditLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const path = join(dir, AUDIT_LOCK);
  const mine = await acquire(path);
  try {
    return await fn();
  } finally {
    // Only our own lock: one judged stale and taken over is someone else's now.
    const held = await readLock(path);
    if (held !== null && parseOwnerText(held)?.lockId === mine.lockId) {
      await unlink(path).catch(() => undefined);
    }
  }
}
