/**
 * Durable file primitives for the controller's own state (token store, journals, operation
 * records): private directories, exclusive creation, atomic replace (temp + fsync + rename +
 * directory fsync). A failed fsync is `DURABILITY_FAILED` and is never retried: after a failed
 * fsync the page cache may already have dropped the data (fsyncgate).
 */
import { constants } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FleetError } from '@fleet/core/node';
import { stateTempName } from '../state-paths.js';
import { fsFailure } from './errors.js';
import { ensureDirUnder } from './parent-walk.js';
import { open, rename, unlink, type DurableHandle } from './seam.js';

const CREATE_EXCLUSIVE =
  constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

/** fsync, mapping a failure to `DURABILITY_FAILED`. */
export async function syncHandle(handle: DurableHandle, what: string): Promise<void> {
  try {
    await handle.sync();
  } catch (error) {
    throw new FleetError(
      'DURABILITY_FAILED',
      `${what}: fsync failed (${String((error as NodeJS.ErrnoException).code ?? error)}); not retried`,
      { cause: error },
    );
  }
}

/** fsync of a directory, so a rename or create inside it survives a power loss. */
export async function fsyncDir(path: string, what = 'directory'): Promise<void> {
  if (process.platform === 'win32') return; // no directory fsync on Windows (best effort there)
  let handle: DurableHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw fsFailure(error, what);
  }
  try {
    await syncHandle(handle, what);
  } finally {
    await handle.close();
  }
}

/**
 * Creates one of the node's own directories under `home` (and its missing parents) with mode 0700,
 * walking every component from the home without following a symbolic link (`ensureDirUnder`,
 * contract §15): a planted link is `PATH_OUTSIDE_ROOT` (or `SYMLINK_REFUSED` inside the home).
 */
export async function ensurePrivateDir(home: string, path: string): Promise<void> {
  try {
    await ensureDirUnder(home, path);
  } catch (error) {
    throw fsFailure(error, `state directory ${basename(path)}`);
  }
}

/**
 * Writes `data` to a new file that must not exist yet (mode 0600), durably. A file that could not
 * be written whole (disk full: catalogue 25) is removed again: it was ours, and half of it would
 * claim what did not happen (an operation id, a pid).
 */
export async function createExclusive(path: string, data: string | Uint8Array): Promise<void> {
  await writeNewFile(path, data);
  await fsyncDir(dirname(path));
}

/** {@link createExclusive} without the directory fsync: the file's bytes are durable, its name not yet. */
async function writeNewFile(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await open(path, CREATE_EXCLUSIVE, 0o600);
  try {
    await handle.writeFile(data);
    await syncHandle(handle, basename(path));
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    throw error;
  }
  await handle.close();
}

/**
 * Replaces `path` atomically and durably with `data` (mode 0600): a temp file written and fsync'd,
 * renamed over `path`, the directory fsync'd. The temp file's own name needs no directory fsync
 * before the rename: a power loss before the last fsync leaves the old file or the new one, whole
 * (and perhaps the temp file, as a crash between its creation and the rename always could); after
 * it, the new one.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = join(dirname(path), stateTempName(path));
  try {
    await writeNewFile(temp, data);
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw fsFailure(error, basename(path));
  }
  await fsyncDir(dirname(path));
}

/**
 * Appends one line to a file (created 0600, never through a symbolic link) and fsyncs it. A short
 * append (disk full) is cut back to the last whole line: a torn line inside a journal would hide
 * every line after it (catalogue 25).
 */
export async function appendLine(path: string, line: string): Promise<void> {
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0),
    0o600,
  );
  try {
    const { size } = await handle.stat();
    await handle.appendFile(`${line}\n`).catch(async (error: unknown) => {
      await handle.truncate(size).catch(() => undefined);
      throw error;
    });
    await syncHandle(handle, basename(path));
  } finally {
    await handle.close();
  }
}

/** Removes a file if it exists, then fsyncs its directory. */
export async function removeDurable(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw fsFailure(error, basename(path));
  }
  await fsyncDir(dirname(path));
}
