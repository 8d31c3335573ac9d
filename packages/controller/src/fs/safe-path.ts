/**
 * Opening node files without being tricked (contract §5 allowlist; catalogue B). A `~/` path is
 * validated with core's `parseHomePath` before any filesystem call; then every parent component
 * is `lstat`ed from the home down and must be a real directory — a symlink is refused
 * (`PATH_OUTSIDE_ROOT` when it resolves outside the home, `SYMLINK_REFUSED` otherwise) — and the
 * file itself is opened with `O_NOFOLLOW`. Size and type are decided by `fstat` on the open fd,
 * and on Linux the fd's real path is compared with the expected one, so a directory swapped for a
 * symlink between the checks and the open is caught too. Parents are re-checked (same device and
 * inode) after the read and before a rename.
 *
 * The reads of a request ({@link ReadSession}) are first proved by the fd alone on Linux: a file
 * whose fd's real path is the expected one needs no walk before the open nor re-check after it.
 *
 * The walk and the read use synchronous system calls: each is a few microseconds on a local
 * file, where a thread-pool round trip costs ten times that — and a fleet-wide drift asks a node
 * for dozens of such calls per request (contract §14). Writes keep their async, journaled path.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  readlinkSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { FleetError, parseHomePath } from '@fleet/core/node';
import { errnoOf, fsFailure } from './errors.js';
import { fsyncDirectorySync, mkdirSync } from './seam.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
export const OPEN_READ = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** A validated `~/` path and where it is on this node. */
export interface Target {
  readonly path: string;
  readonly components: readonly string[];
  readonly absolute: string;
  readonly parent: string;
  readonly name: string;
}

/** Validates `path` (`PATH_INVALID` before any filesystem call) and locates it under `home`. */
export function targetOf(home: string, path: string): Target {
  const components = parseHomePath(path);
  const absolute = join(home, ...components);
  return {
    path,
    components,
    absolute,
    parent: dirname(absolute),
    name: components[components.length - 1] as string,
  };
}

export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

export interface DirLink {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

/**
 * The directories one request has already walked and found real, by path (contract §14, "means":
 * node-side path checks without a syscall storm). A request reading several files under the same
 * directories lstats each directory once on the way down, instead of once per file; what the memo
 * skips is only that walk. Every file is still opened with `O_NOFOLLOW`, its fd's real path still
 * compared with the expected one (Linux), and its parents still re-checked after the read against
 * the device and inode remembered here — so a directory swapped for a symbolic link at any time
 * after the first walk is refused, as before (catalogue B). Never kept beyond one request.
 */
export type WalkMemo = Map<string, DirLink>;

/** The directories from the home down to a target's parent, as they were when walked. */
export interface ParentChain {
  readonly dirs: readonly DirLink[];
  /** False when a parent does not exist (then the file does not either). */
  readonly complete: boolean;
}

function shown(home: string, absolute: string): string {
  return `~/${absolute
    .slice(home.length + 1)
    .split(sep)
    .join('/')}`;
}

function symlinkError(home: string, absolute: string): FleetError {
  let resolved: string | undefined;
  try {
    resolved = realpathSync(absolute);
  } catch {
    resolved = undefined;
  }
  if (resolved === undefined || !isInside(home, resolved)) {
    return new FleetError(
      'PATH_OUTSIDE_ROOT',
      `${shown(home, absolute)} is a symbolic link that resolves outside the node home; refused`,
    );
  }
  return new FleetError('SYMLINK_REFUSED', `${shown(home, absolute)} is a symbolic link; refused`);
}

/**
 * lstat, `undefined` when nothing is there. Without an exception for ENOENT: building one (its
 * message and stack) costs several times the system call, and a walk meets absent paths often.
 */
function lstatOrUndefined(path: string): Stats | undefined {
  return lstatSync(path, { throwIfNoEntry: false });
}

/**
 * fsync of a directory the walk has just made an entry in: a new directory is durable only once
 * its parent is, or a power loss could take it — and the file installed in it — away after the
 * receipt (catalogue 24). A failure is `DURABILITY_FAILED`, never retried.
 */
function syncNewEntry(home: string, parent: string): void {
  try {
    fsyncDirectorySync(parent);
  } catch (error) {
    throw new FleetError(
      'DURABILITY_FAILED',
      `${parent === home ? '~' : shown(home, parent)}: fsync failed (${errnoOf(error) ?? String(error)}); not retried`,
      { cause: error },
    );
  }
}

/**
 * Walks the target's parents from `home`. With `create`, missing directories are made (0700);
 * without, a missing one ends the walk (`complete: false`).
 */
export async function walkParents(
  home: string,
  target: Target,
  options: { readonly create: boolean; readonly memo?: WalkMemo },
): Promise<ParentChain> {
  await Promise.resolve(); // callers await a walk; its system calls are synchronous (see above)
  return walkDirs(home, target.components.slice(0, -1), options.create, options.memo);
}

/**
 * lstat of every component from `home` down, each a real directory (made 0700 with `create`).
 * A directory `memo` holds was found real earlier in the same request: taken as it was (a read's
 * walk only; see {@link WalkMemo}).
 */
function walkDirs(
  home: string,
  components: readonly string[],
  create: boolean,
  memo?: WalkMemo,
): ParentChain {
  const known = create ? undefined : memo;
  let root = known?.get(home);
  if (root === undefined) {
    const stats = lstatSync(home);
    root = { path: home, dev: stats.dev, ino: stats.ino };
    known?.set(home, root);
  }
  const dirs: DirLink[] = [root];
  let current = home;
  for (const component of components) {
    const next = join(current, component);
    const walked = known?.get(next);
    if (walked !== undefined) {
      dirs.push(walked);
      current = next;
      continue;
    }
    let stats = lstatOrUndefined(next);
    if (stats === undefined) {
      if (!create) return { dirs, complete: false };
      try {
        mkdirSync(next, { mode: 0o700 });
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw fsFailure(error, shown(home, next));
      }
      syncNewEntry(home, current);
      stats = lstatSync(next);
    }
    if (stats.isSymbolicLink()) throw symlinkError(home, next);
    if (!stats.isDirectory()) {
      throw new FleetError('NOT_REGULAR_FILE', `${shown(home, next)} is not a directory`);
    }
    const link = { path: next, dev: stats.dev, ino: stats.ino };
    dirs.push(link);
    known?.set(next, link);
    current = next;
  }
  return { dirs, complete: true };
}

/**
 * Opens one of the node's own directories (contract §5, §15: `~/.local/state/fleet/…`,
 * `~/.local/share/fleet/runtime/…`) the way managed files are opened: every component from the
 * home down `lstat`ed and made (0700) when missing, never followed when it is a symbolic link
 * (`PATH_OUTSIDE_ROOT` when it leads out of the home, `SYMLINK_REFUSED` otherwise) — so a planted
 * `backups -> /tmp/x` is refused before anything is written through it. The directory itself is
 * narrowed to 0700 when it is wider. Returns the chain, for a re-check before a write.
 */
export async function ensureDirUnder(home: string, absolute: string): Promise<ParentChain> {
  const chain = await walkDirUnder(home, absolute, { create: true });
  const last = chain.dirs[chain.dirs.length - 1] as DirLink;
  const stats = lstatSync(last.path);
  if ((stats.mode & 0o077) !== 0 && process.platform !== 'win32') chmodSync(last.path, 0o700);
  return chain;
}

/**
 * The same walk, for reading one of the node's own directories: `complete: false` when a component
 * does not exist; a symbolic link anywhere is refused as {@link ensureDirUnder} refuses it.
 */
export async function walkDirUnder(
  home: string,
  absolute: string,
  options: { readonly create: boolean },
): Promise<ParentChain> {
  await Promise.resolve();
  if (!isInside(home, absolute) || absolute === home) {
    throw new FleetError('PATH_OUTSIDE_ROOT', `${absolute} is not under the node home; refused`);
  }
  return walkDirs(home, absolute.slice(home.length + 1).split(sep), options.create);
}

/** Re-checks that every directory of a chain is still the same real directory. */
export async function recheckParents(home: string, chain: ParentChain): Promise<void> {
  await Promise.resolve();
  checkDirs(home, chain.dirs);
}

/** {@link recheckParents}' check: throws for the first directory that is no longer as walked. */
function checkDirs(home: string, dirs: readonly DirLink[]): void {
  for (const dir of dirs) {
    const stats = lstatOrUndefined(dir.path);
    if (!stats || stats.isSymbolicLink() || stats.dev !== dir.dev || stats.ino !== dir.ino) {
      throw new FleetError(
        'SYMLINK_REFUSED',
        `${dir.path === home ? '~' : shown(home, dir.path)} changed during the operation; refused`,
      );
    }
  }
}

/** On Linux: the fd's real path must be the expected one (no symlink swapped in meanwhile). */
export async function checkFdPath(
  home: string,
  handle: { readonly fd: number } | number,
  expected: string,
): Promise<void> {
  await Promise.resolve();
  if (process.platform !== 'linux') return;
  let actual: string;
  try {
    actual = readlinkSync(`/proc/self/fd/${typeof handle === 'number' ? handle : handle.fd}`);
  } catch {
    return; // no /proc: the parent re-check still applies
  }
  if (actual === expected) return;
  throw new FleetError(
    isInside(home, actual) ? 'SYMLINK_REFUSED' : 'PATH_OUTSIDE_ROOT',
    `${shown(home, expected)} resolved elsewhere while it was opened; refused`,
  );
}

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
function readProvedByFd(target: Target, limit: number): LiveFile | undefined {
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
 * {@link ReadSession} re-checks every directory of its request once, after the last read).
 */
async function readUnchecked(
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

/**
 * The reads of one request that reads many files — a snapshot's files and its probers' reads
 * (contract §14, "means": node-side path checks without a syscall storm; a 1,000-host drift asks
 * a node for one snapshot, and the probers ask again for files the snapshot just read):
 *
 * - each directory is walked once for the request ({@link WalkMemo});
 * - each file is read once: a second ask for the same file in the same request (a prober reading
 *   the config file the snapshot read) answers what the first read found — the request sees each
 *   file as it was at one moment, as if both asks came at once. Nothing outlives the request;
 * - every directory the request walked is re-checked once, after its last read
 *   ({@link ReadSession.recheck}), instead of each file's parents after each file's read: a
 *   directory still the same real directory (device and inode) after every read was so after
 *   each one, so whatever a per-file re-check would refuse — a parent swapped for a symbolic link
 *   or another directory and left so — this refuses too, and with it every other file the request
 *   read under that directory.
 *
 * Each file is still opened with `O_NOFOLLOW` after an `lstat`, its size and type decided by
 * `fstat` on the fd and, on Linux, the fd's real path compared with the expected one (catalogue B).
 *
 * On Linux a file is first read proved by its fd alone ({@link readProvedByFd}): no walk, no
 * `lstat`, nothing to re-check — the fd's real path already says every component was the real
 * directory expected when the kernel opened it. Only a file that proof does not cover (absent, a
 * link, another path, no `/proc`) takes the walk above, and only those walks are re-checked.
 */
export class ReadSession {
  private readonly walked: WalkMemo = new Map();
  private readonly reads = new Map<string, { path: string; read: Promise<LiveFile | null> }>();
  private readonly provedByFd: boolean;

  /**
   * `options.provedByFd: false` walks and re-checks every read, as on a system without
   * `/proc/self/fd` (what the tests of that path use on Linux).
   */
  constructor(
    private readonly home: string,
    private readonly limit: number,
    options: { readonly provedByFd?: boolean } = {},
  ) {
    this.provedByFd = options.provedByFd ?? true;
  }

  /** The file at `target`, read (unless this session read it already) without the re-check. */
  read(target: Target): Promise<LiveFile | null> {
    let entry = this.reads.get(target.absolute);
    if (entry === undefined) {
      entry = { path: target.path, read: this.readOnce(target) };
      this.reads.set(target.absolute, entry);
    }
    return entry.read;
  }

  private async readOnce(target: Target): Promise<LiveFile | null> {
    await Promise.resolve(); // a read is awaited; its system calls are synchronous (see above)
    const proved =
      this.provedByFd && procFdReadable ? readProvedByFd(target, this.limit) : undefined;
    return proved ?? readUnchecked(this.home, target, this.limit, this.walked);
  }

  /**
   * Re-checks, once each, the directories this session walked. Returns, by absolute path, each
   * file it read (present) under a directory that is no longer the same real directory, with the
   * error {@link readLive}'s re-check would have raised for it; empty when nothing changed.
   */
  async recheck(): Promise<Map<string, Error>> {
    await Promise.resolve();
    const changed = new Map<string, unknown>();
    for (const dir of this.walked.values()) {
      try {
        checkDirs(this.home, [dir]);
      } catch (error) {
        changed.set(dir.path, error);
      }
    }
    const refused = new Map<string, Error>();
    if (changed.size === 0) return refused;
    for (const [absolute, { path, read }] of this.reads) {
      const live = await read.catch(() => null);
      const dir = live?.chain.dirs.find((d) => changed.has(d.path));
      if (dir !== undefined) refused.set(absolute, fsFailure(changed.get(dir.path), path));
    }
    return refused;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of a file's bytes, fail-closed: NUL bytes (binary, UTF-16) are `FORMAT_UNSUPPORTED`,
 * invalid UTF-8 is `ENCODING_INVALID`. A UTF-8 BOM is kept as it is.
 */
export function decodeText(bytes: Uint8Array, what: string): string {
  if (bytes.includes(0)) {
    throw new FleetError('FORMAT_UNSUPPORTED', `${what} holds binary content (NUL bytes); refused`);
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new FleetError('ENCODING_INVALID', `${what} is not valid UTF-8; refused`);
  }
}
