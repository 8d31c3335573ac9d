/**
 * The tree hash of a generation: one sha256 over a sorted listing of every directory and file
 * (`d <path>` / `f <path> <sha256>`), excluding fleet's own top-level files (the manifest and the
 * artifact copy). Modes are not hashed — they are checked separately (files 0444, dirs 0555) —
 * and anything that is neither a file nor a directory makes the tree invalid.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { join } from 'node:path';
import { GENERATION_ARTIFACT, GENERATION_MANIFEST } from '@fleet/core/node';
import type { TarEntry } from './tar.js';

export interface TreeListing {
  readonly hash: string;
  readonly files: number;
  readonly bytes: number;
}

export interface TreeEntry {
  readonly path: string;
  readonly type: 'file' | 'directory';
  readonly sha256?: string;
  readonly size?: number;
}

export const sha256Hex = (data: string | Uint8Array): string =>
  createHash('sha256').update(data).digest('hex');

/** Pure: the tree hash of a listing (directories implied by file paths are added). */
export function treeHash(entries: readonly TreeEntry[]): TreeListing {
  const lines = new Map<string, string>();
  let files = 0;
  let bytes = 0;
  for (const entry of entries) {
    // Implied parents, deepest first, up to the first one already listed (its own are too).
    for (let dir = parentOf(entry.path); dir !== '' && !lines.has(dir); dir = parentOf(dir)) {
      lines.set(dir, `d ${dir}\n`);
    }
    if (entry.type === 'directory') lines.set(entry.path, `d ${entry.path}\n`);
    else {
      files += 1;
      bytes += entry.size ?? 0;
      lines.set(entry.path, `f ${entry.path} ${entry.sha256 ?? ''}\n`);
    }
  }
  const hash = createHash('sha256');
  for (const key of [...lines.keys()].sort()) hash.update(lines.get(key) as string);
  return { hash: hash.digest('hex'), files, bytes };
}

const parentOf = (path: string): string => path.slice(0, Math.max(0, path.lastIndexOf('/')));

/** The tree hash the unpacked entries of a tarball must have on disk. */
export function tarTreeHash(entries: readonly TarEntry[]): TreeListing {
  return treeHash(
    entries.map((entry) =>
      entry.type === 'directory'
        ? { path: entry.path, type: 'directory' as const }
        : {
            path: entry.path,
            type: 'file' as const,
            sha256: sha256Hex(entry.data),
            size: entry.data.length,
          },
    ),
  );
}

export interface DiskTree {
  readonly listing: TreeListing;
  /** Paths whose mode is not 0444 (files) or 0555 (directories), `/`-separated. */
  readonly writable: readonly string[];
  /** Paths that are neither a file nor a directory (a symlink, a FIFO…). */
  readonly foreign: readonly string[];
}

/**
 * Walks a generation on disk (never following a link) and hashes it. A runtime holds some 14,000
 * files: the walk reads each directory with synchronous calls, which cost a quarter of the CPU of
 * one promise per `lstat`/`readFile` (bench/RESULTS.md, upgrade-fleet), and yields to the event
 * loop between directories, so a controller verifying a held generation still answers meanwhile.
 * File contents go through one reused buffer, so ~100 MB of reads allocate nothing the garbage
 * collector must chase (a `readFileSync` per file did, in every controller verifying a generation).
 */
export async function diskTree(root: string): Promise<DiskTree> {
  const entries: TreeEntry[] = [];
  const writable: string[] = [];
  const foreign: string[] = [];
  const reader = new FileHasher();
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const subdirectories: [string, string][] = [];
    for (const name of readdirSync(dir).sort()) {
      if (prefix === '' && (name === GENERATION_MANIFEST || name === GENERATION_ARTIFACT)) continue;
      const path = prefix === '' ? name : `${prefix}/${name}`;
      const absolute = join(dir, name);
      const seen = reader.hash(absolute);
      if (seen.type === 'directory') {
        if ((seen.mode & 0o777) !== 0o555) writable.push(path);
        entries.push({ path, type: 'directory' });
        subdirectories.push([absolute, path]);
      } else if (seen.type === 'file') {
        if ((seen.mode & 0o777) !== 0o444) writable.push(path);
        entries.push({ path, type: 'file', sha256: seen.sha256, size: seen.size });
      } else foreign.push(path);
    }
    for (const [absolute, path] of subdirectories) {
      await yieldToEventLoop();
      await walk(absolute, path);
    }
  };
  await walk(root, '');
  return { listing: treeHash(entries), writable, foreign };
}

type SeenEntry =
  | { readonly type: 'file'; readonly mode: number; readonly sha256: string; readonly size: number }
  | { readonly type: 'directory'; readonly mode: number }
  | { readonly type: 'foreign' };

/** Inspects one entry without following a link and hashes a regular file through a kept buffer. */
class FileHasher {
  /** Read in 1 MiB chunks: a large file (a shipped Node.js binary) never grows it. */
  private readonly buffer = Buffer.allocUnsafe(1 << 20);

  hash(path: string): SeenEntry {
    const stats = lstatSync(path);
    if (stats.isDirectory()) return { type: 'directory', mode: stats.mode };
    if (!stats.isFile()) return { type: 'foreign' };
    // O_NOFOLLOW (where the platform has it): a file swapped for a link since the lstat fails.
    const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      return { type: 'file', mode: stats.mode, ...this.contents(fd) };
    } finally {
      closeSync(fd);
    }
  }

  private contents(fd: number): { sha256: string; size: number } {
    const hash = createHash('sha256');
    let size = 0;
    for (;;) {
      const read = readSync(fd, this.buffer, 0, this.buffer.length, null);
      if (read === 0) break;
      hash.update(this.buffer.subarray(0, read));
      size += read;
    }
    return { sha256: hash.digest('hex'), size };
  }
}
