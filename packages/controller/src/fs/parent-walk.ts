/**
 * The walk to a node file (contract §5 allowlist; catalogue B): every parent component `lstat`ed
 * from the home down and required to be a real directory — a symlink is refused
 * (`PATH_OUTSIDE_ROOT` when it resolves outside the home, `SYMLINK_REFUSED` otherwise) — and made
 * (0700, its parent fsync'd) when a write needs it. The chain of directories walked (device and
 * inode) is re-checked after a read and before a rename, and on Linux an open fd's real path is
 * compared with the expected one, so a directory swapped for a symlink between the checks and the
 * open is caught too. The system calls are synchronous (see safe-path.ts).
 */
import { chmodSync, lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { join, sep } from 'node:path';
import { FleetError } from '@fleet/core/node';
import { errnoOf, fsFailure } from './errors.js';
import { isInside, shown, type Target } from './home-target.js';
import { fsyncDirectorySync, mkdirSync } from './seam.js';

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
export function lstatOrUndefined(path: string): Stats | undefined {
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
export function checkDirs(home: string, dirs: readonly DirLink[]): void {
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
