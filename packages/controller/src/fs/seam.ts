/**
 * The filesystem calls of the durable write path (docs/durability.md): creating, writing and
 * fsyncing files, renaming, linking and unlinking them, making directories and fsyncing them.
 * `writer.ts`, `backups.ts`, `fs/durable.ts`, `fs/safe-path.ts` (directory creation) and the audit
 * log import these instead of `node:fs`, so the power-loss test (catalogue 24) can put a recorder
 * in their place: it tracks which writes and names a crash would keep (SQLite `test6.c` style)
 * and builds the states a power loss could leave.
 *
 * Production runs Node's own functions: {@link nodeDurableFs} is the default, and each export
 * here is one indirect call in front of them — no behaviour of its own. Reads keep using
 * `node:fs` directly: a crash does not change what was read.
 */
import { closeSync, constants, fsyncSync, mkdirSync as nodeMkdirSync, openSync } from 'node:fs';
import {
  link as nodeLink,
  mkdir as nodeMkdir,
  open as nodeOpen,
  rename as nodeRename,
  unlink as nodeUnlink,
  type FileHandle,
} from 'node:fs/promises';

/** The calls of the durable write path, with Node's signatures. */
export interface DurableFs {
  /** `open(2)`; the handle's `writeFile`/`write`/`truncate`/`chmod`/`sync`/`datasync` write. */
  open(path: string, flags: number | string, mode?: number): Promise<FileHandle>;
  rename(from: string, to: string): Promise<void>;
  /** A hard link `created` to the inode at `existing` (same filesystem). */
  link(existing: string, created: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options: { recursive?: boolean; mode?: number }): Promise<string | undefined>;
  /** One directory; the safe-path walk is synchronous (see safe-path.ts). */
  mkdirSync(path: string, options: { mode: number }): void;
  /** fsync of a directory, synchronously (after `mkdirSync`). */
  fsyncDirectorySync(path: string): void;
}

/** Node's own functions: what the controller runs everywhere but in the power-loss test. */
export const nodeDurableFs: DurableFs = {
  open: (path, flags, mode) => nodeOpen(path, flags, mode),
  rename: nodeRename,
  link: nodeLink,
  unlink: nodeUnlink,
  mkdir: (path, options) => nodeMkdir(path, options),
  mkdirSync: (path, options) => {
    nodeMkdirSync(path, options);
  },
  fsyncDirectorySync: (path) => {
    const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};

let current: DurableFs = nodeDurableFs;

/**
 * Puts `fs` in place of Node's functions for this process (the power-loss test's recorder);
 * returns the function that puts the previous one back.
 */
export function useDurableFs(fs: DurableFs): () => void {
  const previous = current;
  current = fs;
  return () => {
    current = previous;
  };
}

export const open: DurableFs['open'] = (path, flags, mode) => current.open(path, flags, mode);
export const rename: DurableFs['rename'] = (from, to) => current.rename(from, to);
export const link: DurableFs['link'] = (existing, created) => current.link(existing, created);
export const unlink: DurableFs['unlink'] = (path) => current.unlink(path);
export const mkdir: DurableFs['mkdir'] = (path, options) => current.mkdir(path, options);
export const mkdirSync: DurableFs['mkdirSync'] = (path, options) =>
  current.mkdirSync(path, options);
export const fsyncDirectorySync: DurableFs['fsyncDirectorySync'] = (path) =>
  current.fsyncDirectorySync(path);
