/**
 * Reads of a domain's own files by a node half when the host hands it no `ctx.files` (an older
 * controller; contract §6, `NodeContext.files`). One reader for every plugin, because what it
 * refuses is security-relevant (reliability catalogue, "Path syntax" and symlinks): the path is
 * checked as a `~/` path first, a final symlink is never followed (`O_NOFOLLOW`), a FIFO does not
 * block the open (`O_NONBLOCK`) and anything but a regular file is refused, and the read stops at a
 * bound, the controller's default file bound. The controller's own reader (`ctx.files`) also walks
 * every parent and applies the domain's allowlist; this one is the floor a plugin falls back to.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { FleetError } from './errors.js';
import type { SafeFileReader } from './interfaces/node-context.js';
import { parseHomePath } from './paths.js';

/** The controller's default bound on a managed file (its `limits.maxFileBytes`): 1 MiB. */
export const HOME_FILE_READ_LIMIT = 1024 * 1024;

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** One file's bytes and their sha256, as `SafeFileReader.read` answers. */
export interface HomeFile {
  readonly content: Uint8Array;
  readonly sha256: string;
}

/**
 * The live file at the `~/` path `path` under `home`: `null` when it or a parent does not exist;
 * `PATH_INVALID` for a path that is not a home path, `SYMLINK_REFUSED` for a final symlink,
 * `NOT_REGULAR_FILE` for a directory, FIFO or device, `FILE_TOO_LARGE` past `limit` bytes.
 */
export async function readHomeFile(
  home: string,
  path: string,
  limit = HOME_FILE_READ_LIMIT,
): Promise<HomeFile | null> {
  const absolute = join(home, ...parseHomePath(path));
  let handle: FileHandle;
  try {
    handle = await open(absolute, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (code === 'ELOOP') throw new FleetError('SYMLINK_REFUSED', `${path} is a symbolic link`);
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new FleetError('NOT_REGULAR_FILE', `${path} is not a regular file`);
    const content = await readToEnd(handle, path, limit, stats.size);
    return { content, sha256: createHash('sha256').update(content).digest('hex') };
  } finally {
    await handle.close();
  }
}

/** A {@link SafeFileReader} over {@link readHomeFile}: `ctx.files ?? createHomeFileReader(ctx.home)`. */
export function createHomeFileReader(home: string, limit = HOME_FILE_READ_LIMIT): SafeFileReader {
  return { read: (path) => readHomeFile(home, path, limit) };
}

/** Reads to the end, failing past `limit` bytes (the file may have grown since its `stat`). */
async function readToEnd(
  handle: FileHandle,
  path: string,
  limit: number,
  size: number,
): Promise<Uint8Array> {
  let buffer = Buffer.allocUnsafe(Math.min(limit, size) + 1);
  let total = 0;
  for (;;) {
    if (total === buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(limit + 1, 2 * buffer.length));
      buffer.copy(grown, 0, 0, total);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
    if (bytesRead === 0) return buffer.subarray(0, total);
    total += bytesRead;
    if (total > limit) {
      throw new FleetError('FILE_TOO_LARGE', `${path} is over the ${limit}-byte bound of a read`);
    }
  }
}
