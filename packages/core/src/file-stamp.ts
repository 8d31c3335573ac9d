/**
 * A file's version stamp: what tells one version of a file or directory from another without
 * reading it — type and mode, device, inode, size, and the modification and change times in
 * nanoseconds (the change time moves on every write, even one that puts the modification time
 * back; a rename over the name brings another inode; the mode is there because a chmod within the
 * clock tick of the last stamp moves no time). A long-lived process keeps what it parsed from a
 * file under its stamp and reads the file again only when the stamp changes (contract §14: the
 * controller's env chain, token store and record of writes, on every request).
 *
 * Synchronous: one system call of a few microseconds, where a round trip through the thread pool
 * costs several times that on every request.
 */
import { lstatSync, statSync, type BigIntStats } from 'node:fs';

/** How {@link fileStamp} looks at a path. */
export interface FileStampOptions {
  /** Stamp what a symbolic link at `path` points to (`stat`) rather than the name (`lstat`). */
  readonly follow: boolean;
}

/**
 * The stamp of `path`, `null` when nothing is there: ENOENT, or ENOTDIR (a name below a file, where
 * nothing can be). Node 20 throws for ENOTDIR even without `throwIfNoEntry` and Node 24 does not;
 * both answer `null` here. ENOENT is answered without an exception, whose building costs several
 * times the system call. Any other failure is thrown, for the caller to say what it means.
 */
export function fileStamp(path: string, options: FileStampOptions): string | null {
  let s: BigIntStats | undefined;
  try {
    s = options.follow
      ? statSync(path, { bigint: true, throwIfNoEntry: false })
      : lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
  return s === undefined ? null : `${s.mode}:${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}
