/**
 * The filesystem calls of the durable write path (docs/durability.md): creating, writing and
 * fsyncing files, renaming, linking and unlinking them, making directories and fsyncing them.
 * `writer.ts`, `temp-swap.ts`, `backups.ts`, `fs/durable.ts`, `fs/parent-walk.ts` (directory
 * creation) and the audit log import these instead of `node:fs`, so the power-loss test
 * (catalogue 24) can put a recorder in their place: it tracks which writes and names a crash would
 * keep (SQLite `test6.c` style) and builds the states a power loss could leave.
 *
 * Production runs Node's own functions: {@link nodeDurableFs} is the default, and each export
 * here is one indirect call in front of them — no behaviour of its own. Reads keep using
 * `node:fs` directly: a crash does not change what was read.
 *
 * Every call but fsync runs synchronously and hands back a settled promise
 * ({@link SyncBackedHandle}), its error a rejection as from `fs/promises`. An install of five files
 * made ~280 of these calls one after another, each a trip to libuv's thread pool and back;
 * made in place, opening, writing, renaming or closing a small file takes microseconds, and the
 * install's round trip took ~10 ms less (~50 → ~40 ms on the bench's workload). fsync stays on the
 * thread pool: it waits for the disk, which can take long, and the controller keeps answering
 * meanwhile (docs/durability.md, "The filesystem seam").
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fdatasync,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  mkdirSync as nodeMkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  type Stats,
} from 'node:fs';

/**
 * The calls the durable write path makes on an open file: those of Node's `FileHandle` it uses,
 * with the same meaning (`writeFile`, `appendFile` and `readFile` from the current position).
 */
export interface DurableHandle {
  readonly fd: number;
  writeFile(data: string | Uint8Array): Promise<void>;
  appendFile(data: string | Uint8Array): Promise<void>;
  write(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number | null,
  ): Promise<{ bytesWritten: number }>;
  read(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number | null,
  ): Promise<{ bytesRead: number }>;
  readFile(encoding: BufferEncoding): Promise<string>;
  stat(): Promise<Stats>;
  truncate(length?: number): Promise<void>;
  chmod(mode: number): Promise<void>;
  chown(uid: number, gid: number): Promise<void>;
  sync(): Promise<void>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** `run()`'s value as a settled promise: a synchronous call's error becomes a rejection. */
function settled<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** fsync or fdatasync of `fd` on the thread pool. */
function flushed(flush: typeof fsync, fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    flush(fd, (error) => (error ? reject(error) : resolve()));
  });
}

/** An open file whose calls, but fsync's, run synchronously (see the header). */
export class SyncBackedHandle implements DurableHandle {
  private closed = false;

  constructor(readonly fd: number) {}

  writeFile(data: string | Uint8Array): Promise<void> {
    return settled(() => writeFileSync(this.fd, data));
  }

  appendFile(data: string | Uint8Array): Promise<void> {
    return settled(() => writeFileSync(this.fd, data));
  }

  write(buffer: Uint8Array, offset: number, length: number, position: number | null) {
    return settled(() => ({ bytesWritten: writeSync(this.fd, buffer, offset, length, position) }));
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number | null) {
    return settled(() => ({ bytesRead: readSync(this.fd, buffer, offset, length, position) }));
  }

  readFile(encoding: BufferEncoding): Promise<string> {
    return settled(() => readFileSync(this.fd, encoding));
  }

  stat(): Promise<Stats> {
    return settled(() => fstatSync(this.fd));
  }

  truncate(length = 0): Promise<void> {
    return settled(() => ftruncateSync(this.fd, length));
  }

  chmod(mode: number): Promise<void> {
    return settled(() => fchmodSync(this.fd, mode));
  }

  chown(uid: number, gid: number): Promise<void> {
    return settled(() => fchownSync(this.fd, uid, gid));
  }

  sync(): Promise<void> {
    return flushed(fsync, this.fd);
  }

  datasync(): Promise<void> {
    return flushed(fdatasync, this.fd);
  }

  /** Closes the file once: a second close does nothing, as a FileHandle's. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return settled(() => closeSync(this.fd));
  }
}

/** The calls of the durable write path, with Node's signatures. */
export interface DurableFs {
  /** `open(2)`; the handle's `writeFile`/`write`/`truncate`/`chmod`/`sync`/`datasync` write. */
  open(path: string, flags: number | string, mode?: number): Promise<DurableHandle>;
  rename(from: string, to: string): Promise<void>;
  /** A hard link `created` to the inode at `existing` (same filesystem). */
  link(existing: string, created: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options: { recursive?: boolean; mode?: number }): Promise<string | undefined>;
  /** One directory; the parent walk is synchronous (parent-walk.ts; why: safe-path.ts). */
  mkdirSync(path: string, options: { mode: number }): void;
  /** fsync of a directory, synchronously (after `mkdirSync`). */
  fsyncDirectorySync(path: string): void;
}

/** Node's own functions: what the controller runs everywhere but in the power-loss test. */
export const nodeDurableFs: DurableFs = {
  open: (path, flags, mode) => settled(() => new SyncBackedHandle(openSync(path, flags, mode))),
  rename: (from, to) => settled(() => renameSync(from, to)),
  link: (existing, created) => settled(() => linkSync(existing, created)),
  unlink: (path) => settled(() => unlinkSync(path)),
  mkdir: (path, options) => settled(() => nodeMkdirSync(path, options)),
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
