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
 *
 * The parts are siblings: the `~/` path located under the home (home-target.ts), the walk of its
 * parents and their re-check (parent-walk.ts), and the read of one file through its fd
 * (live-read.ts). This module keeps the reads of a request and the text of a file's bytes, and
 * re-exports what the controller outside `fs/` uses of the others, which it imports from here.
 */
import { FleetError } from '@fleet/core/node';
import { fsFailure } from './errors.js';
import type { Target } from './home-target.js';
import { readProvedByFd, readUnchecked, type LiveFile } from './live-read.js';
import { checkDirs, type WalkMemo } from './parent-walk.js';

export { targetOf, type Target } from './home-target.js';
export { OPEN_READ, readLive, sha256Hex, type LiveFile } from './live-read.js';
export {
  checkFdPath,
  ensureDirUnder,
  recheckParents,
  walkDirUnder,
  walkParents,
} from './parent-walk.js';

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
    const proved = this.provedByFd ? readProvedByFd(target, this.limit) : undefined;
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
