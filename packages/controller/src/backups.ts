/**
 * Backups of replaced files (contract §8.4): `~/.local/state/fleet/backups/<domain>/`, directory 0700,
 * files 0600 created with `O_EXCL`, named `<stem>-<hash>.<YYYYMMDDTHHMMSSZ>.<operation id>.<seq>.bak`
 * (UTC, the operation id, and a sequence: never the same name twice, whatever the clock does).
 * Kept up to the domain's count per file, oldest pruned first, never the newest.
 *
 * `<stem>-<hash>` is the file's backup id: a readable stem (the id with anything but
 * `[A-Za-z0-9._-]` as `_`, at most 48 characters) and 16 hex digits of the sha256 of the whole
 * id, so two files never share one (`é` and `ü`, `a/b` and `a_b` did when the stem was all:
 * eleven installs of one pruned the other's backups; reliability catalogue 68). Backups named
 * before (the bare stem) are still found; one is pruned only when its stem could not stand for
 * another file (no `_` in it).
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { compareCodeUnits } from '@fleet/core/node';
import { errnoOf, fsFailure } from './fs/errors.js';
import { fsyncDir, syncHandle } from './fs/durable.js';
import { checkFdPath, ensureDirUnder, recheckParents, walkDirUnder } from './fs/safe-path.js';
import { open, unlink } from './fs/seam.js';

const NAME = /^(.+)\.(\d{8}T\d{6}Z)\.([0-9A-HJKMNP-TV-Z]{26})\.(\d{3,})\.bak$/;

export interface BackupName {
  readonly fileId: string;
  readonly stamp: string;
  readonly operationId: string;
  readonly seq: number;
}

export function parseBackupName(name: string): BackupName | undefined {
  const match = NAME.exec(name);
  if (!match) return undefined;
  return {
    fileId: match[1] as string,
    stamp: match[2] as string,
    operationId: match[3] as string,
    seq: Number(match[4]),
  };
}

/** `YYYYMMDDTHHMMSSZ`, in UTC. */
export function utcStamp(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

const STEM_CHARS = 48;
const HASH_HEX = 16;

/** The readable stem of a file id: what backup names held before the hash (anything but `[A-Za-z0-9._-]` as `_`). */
function legacyBackupFileId(fileId: string): string {
  return fileId.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** A file id as it appears in a backup name: its stem and a hash of the whole id. */
export function backupFileId(fileId: string): string {
  const hash = createHash('sha256').update(fileId, 'utf8').digest('hex').slice(0, HASH_HEX);
  return `${legacyBackupFileId(fileId).slice(0, STEM_CHARS)}-${hash}`;
}

/**
 * Whether a backup whose name holds `named` (its parsed file id) is a backup of `fileId`: named
 * now, or named before the hash with this file's stem (which `a/b` and `a_b` shared: such an old
 * backup is found for both, and {@link pruneBackups} never deletes it).
 */
export function isBackupOf(named: string, fileId: string): boolean {
  return named === backupFileId(fileId) || named === legacyBackupFileId(fileId);
}

/** An old-style backup that can only be this file's: its stem had no character to collide on. */
function prunable(named: string, fileId: string): boolean {
  if (named === backupFileId(fileId)) return true;
  return named === legacyBackupFileId(fileId) && !named.includes('_');
}

export function backupName(
  fileId: string,
  stamp: string,
  operationId: string,
  seq: number,
): string {
  return `${backupFileId(fileId)}.${stamp}.${operationId}.${String(seq).padStart(3, '0')}.bak`;
}

/**
 * Writes a backup of `bytes` durably; returns its absolute path. Never overwrites anything, and
 * never writes through a symbolic link: the directory is walked from `home` component by
 * component (contract §15), the file created `O_EXCL | O_NOFOLLOW` and its real path checked
 * before a byte of the (possibly secret-bearing) content goes into it.
 */
export async function writeBackup(
  home: string,
  dir: string,
  input: { fileId: string; operationId: string; now: Date; bytes: Uint8Array },
): Promise<string> {
  let chain;
  try {
    chain = await ensureDirUnder(home, dir);
  } catch (error) {
    throw fsFailure(error, 'backup directory');
  }
  const stamp = utcStamp(input.now);
  for (let seq = 0; ; seq += 1) {
    const path = join(dir, backupName(input.fileId, stamp, input.operationId, seq));
    let handle;
    try {
      handle = await open(
        path,
        constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0),
        0o600,
      );
    } catch (error) {
      if (errnoOf(error) === 'EEXIST') continue;
      throw fsFailure(error, 'backup');
    }
    try {
      await checkFdPath(home, handle, path);
      await recheckParents(home, chain);
      await handle.writeFile(input.bytes);
      await syncHandle(handle, 'backup');
    } catch (error) {
      await handle.close();
      await unlink(path).catch(() => undefined);
      throw fsFailure(error, 'backup');
    }
    await handle.close();
    await fsyncDir(dir, 'backup directory');
    return path;
  }
}

/**
 * The backup file names in a domain's directory, oldest first (`[]` when there is none). The
 * directory is walked from `home` like any state directory: a symbolic link on the way is
 * refused (`PATH_OUTSIDE_ROOT`), never listed through.
 */
export async function listBackups(
  home: string,
  dir: string,
): Promise<{ name: string; parsed: BackupName }[]> {
  let names: string[];
  try {
    const chain = await walkDirUnder(home, dir, { create: false });
    if (!chain.complete) return [];
    names = await readdir(dir);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return [];
    throw fsFailure(error, 'backup directory');
  }
  return (
    names
      .map((name) => ({ name, parsed: parseBackupName(name) }))
      .filter((entry): entry is { name: string; parsed: BackupName } => entry.parsed !== undefined)
      // Oldest first by the stamp in the name (old-style and hashed names of one file sort apart).
      .sort(
        (a, b) =>
          compareCodeUnits(a.parsed.stamp, b.parsed.stamp) || compareCodeUnits(a.name, b.name),
      )
  );
}

/**
 * Deletes the oldest backups of `fileId` beyond `keep`. The backup just written (`newest`) is
 * never deleted, even when the clock made its name sort first. No directory fsync: a deletion a
 * power loss undoes gives back an old backup, which the next write of that file prunes again.
 */
export async function pruneBackups(
  home: string,
  dir: string,
  fileId: string,
  keep: number,
  newest: string,
): Promise<string[]> {
  const others = (await listBackups(home, dir))
    .filter((entry) => prunable(entry.parsed.fileId, fileId) && entry.name !== newest)
    .map((entry) => entry.name);
  const excess = others.length - Math.max(0, keep - 1);
  const removed = others.slice(0, Math.max(0, excess));
  for (const name of removed) await unlink(join(dir, name)).catch(() => undefined);
  return removed;
}

/**
 * The `~/` paths of every backup the node holds, all domains (the secret memory's start-up
 * reconcile). A domain directory that is a symbolic link is refused like any state directory.
 */
export async function allBackupPaths(home: string, backupsDir: string): Promise<string[]> {
  const chain = await walkDirUnder(home, backupsDir, { create: false });
  if (!chain.complete) return [];
  const out: string[] = [];
  for (const domain of (await readdir(backupsDir)).sort()) {
    for (const { name } of await listBackups(home, join(backupsDir, domain))) {
      out.push(
        `~/${[...backupsDir.slice(home.length + 1).split(/[\\/]/), domain, name].join('/')}`,
      );
    }
  }
  return out;
}
