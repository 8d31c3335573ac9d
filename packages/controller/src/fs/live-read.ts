/**
 * Reading one node file through one fd (contract §5 allowlist, §14; catalogue B): the file opened
 * with `O_NOFOLLOW` after the walk of its parents (parent-walk.ts), its size and type decided by
 * `fstat` on the fd, on Linux the fd's real path compared with the expected one, its bytes read to
 * their end within a bound, and its parents re-checked after the read. On Linux a read may be
 * proved by its fd alone instead ({@link readProvedByFd}). The system calls are synchronous (see
 * safe-path.ts).
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readSync,
  readlinkSync,
  type Stats,
} from 'node:fs';
import { FleetError } from '@fleet/core/node';
import { errnoOf, fsFailure } from './errors.js';
import type { Target } from './home-target.js';
import {
  checkFdPath,
  lstatOrUndefined,
  recheckParents,
  walkParents,
  type ParentChain,
  type WalkMemo,
} from './parent-walk.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
export const OPEN_READ = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** A live file as read through one fd. */
export interface LiveFile {
  readonly bytes: Buffer;
  readonly sha256: string;
  readonly size: number;
  readonly mtime: Date;
  /** Permission bits (`mode & 0o7777`). */
  readonly mode: number;
  readonly ino: number;
  /** Hard links to the inode: more than one, and a replace-by-rename breaks the others (catalogue 16). */
  readonly nlink: number;
  readonly uid: number;
  readonly gid: number;
  readonly chain: ParentChain;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads `fd` to its end, failing past `limit` bytes. The buffer is sized by the `fstat` just taken
 * (`expected`, plus one byte, so the end is seen without a second buffer) and grows only for a
 * file that grew since: a 64 KiB buffer per read, and a second one to see the end, made every
 * snapshot allocate ~1 MiB outside the heap, and a 1,000-node process ran a full GC every few
 * dozen requests (contract §14). A read that comes back short exactly at `expected` bytes is the
 * end: the byte asked for beyond the size fstat gave was not there (a regular file reads short
 * only at its end), so no second read is made to see it (one system call per file fewer); a file
 * whose bytes differ in number from its fstat is read on to a read of none, as always.
 */
export function readBounded(fd: number, limit: number, what: string, expected: number): Buffer {
  let buffer = Buffer.allocUnsafe(Math.min(limit + 1, Math.max(expected, 0) + 1));
  let total = 0;
  for (;;) {
    if (total === buffer.length) {
      // Full and still under the bound (checked below): the file grew while read.
      const grown = Buffer.allocUnsafe(Math.min(limit + 1, Math.max(2 * total, 64 * 1024)));
      buffer.copy(grown, 0, 0, total);
      buffer = grown;
    }
    const asked = buffer.length - total;
    const bytesRead = readSync(fd, buffer, total, asked, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > limit) {
      throw new FleetError(
        'FILE_TOO_LARGE',
        `${what} grew past the ${limit}-byte bound while read`,
      );
    }
    if (bytesRead < asked && total === expected) break;
  }
  return buffer.subarray(0, total);
}

/**
 * Reads a live file safely: `null` when it (or a parent) does not exist; `SYMLINK_REFUSED`,
 * `PATH_OUTSIDE_ROOT`, `NOT_REGULAR_FILE` or `FILE_TOO_LARGE` (from `fstat` on the fd) otherwise.
 * `memo`: the directories this request already walked (see {@link WalkMemo}).
 */
export async function readLive(
  home: string,
  target: Target,
  limit: number,
  memo?: WalkMemo,
): Promise<LiveFile | null> {
  const live = await readUnchecked(home, target, limit, memo);
  if (live === null) return null;
  try {
    await recheckParents(home, live.chain);
  } catch (error) {
    throw fsFailure(error, target.path);
  }
  return live;
}

function liveFileOf(bytes: Buffer, fstats: Stats, chain: ParentChain): LiveFile {
  return {
    bytes,
    sha256: sha256Hex(bytes),
    size: bytes.length,
    mtime: fstats.mtime,
    mode: fstats.mode & 0o7777,
    ino: fstats.ino,
    nlink: fstats.nlink,
    uid: fstats.uid,
    gid: fstats.gid,
    chain,
  };
}

/** The chain of a read its fd proved (below): no directory to re-check. */
const PROVED_BY_FD: ParentChain = { dirs: [], complete: true };

/** False once `/proc/self/fd` could not be read: this process has no such proof then. */
let procFdReadable = process.platform === 'linux';

/**
 * A read proved by its fd alone (Linux): the file opened with `O_NOFOLLOW`, a regular file by
 * `fstat`, and the fd's real path — what the kernel resolved at the open, every component —
 * exactly the expected one. That is all the walk before the open and the re-check after it are
 * there to establish: a parent that is a symbolic link (into the home or out of it), or one
 * swapped for a link or another directory before the open, makes the real path differ; one swapped
 * after the open changes nothing the fd reads. `undefined` when the proof does not hold or the
 * open failed — absent, a link, not a regular file, too large, another path, no `/proc` — and
 * the checked read ({@link readUnchecked}) then decides, with its own precise answer and error.
 * Three system calls per file fewer than that read and none per directory (contract §14).
 */
export function readProvedByFd(target: Target, limit: number): LiveFile | undefined {
  if (!procFdReadable) return undefined;
  let fd: number;
  try {
    fd = openSync(target.absolute, OPEN_READ);
  } catch {
    return undefined;
  }
  try {
    const fstats = fstatSync(fd);
    if (!fstats.isFile() || fstats.size > limit) return undefined;
    let actual: string;
    try {
      actual = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      procFdReadable = false;
      return undefined;
    }
    if (actual !== target.absolute) return undefined;
    return liveFileOf(readBounded(fd, limit, target.path, fstats.size), fstats, PROVED_BY_FD);
  } catch (error) {
    throw fsFailure(error, target.path);
  } finally {
    closeSync(fd);
  }
}

/**
 * {@link readLive} but for the re-check of the parents after the read, which is the caller's (a
 * `ReadSession`, safe-path.ts, re-checks every directory of its request once, after the last read).
 */
export async function readUnchecked(
  home: string,
  target: Target,
  limit: number,
  memo: WalkMemo | undefined,
): Promise<LiveFile | null> {
  try {
    const chain = await walkParents(home, target, { create: false, ...(memo ? { memo } : {}) });
    if (!chain.complete) return null;
    const stats = lstatOrUndefined(target.absolute);
    if (stats === undefined) return null;
    if (stats.isSymbolicLink()) {
      throw new FleetError('SYMLINK_REFUSED', `${target.path} is a symbolic link; refused`);
    }
    if (!stats.isFile()) {
      throw new FleetError('NOT_REGULAR_FILE', `${target.path} is not a regular file`);
    }
    let fd: number;
    try {
      fd = openSync(target.absolute, OPEN_READ);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return null;
      throw error;
    }
    try {
      const fstats = fstatSync(fd);
      if (!fstats.isFile()) {
        throw new FleetError('NOT_REGULAR_FILE', `${target.path} is not a regular file`);
      }
      if (fstats.size > limit) {
        throw new FleetError(
          'FILE_TOO_LARGE',
          `${target.path} is ${fstats.size} bytes, over the ${limit}-byte bound`,
        );
      }
      await checkFdPath(home, fd, target.absolute);
      return liveFileOf(readBounded(fd, limit, target.path, fstats.size), fstats, chain);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw fsFailure(error, target.path);
  }
}
