/**
 * The tree hash of a generation: one sha256 over a sorted listing of every directory and file
 * (`d <path>` / `f <path> <sha256>`), excluding fleet's own top-level files (the manifest and the
 * artifact copy). Modes are not hashed — they are checked separately (files 0444, dirs 0555) —
 * and anything that is neither a file nor a directory makes the tree invalid.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
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
    const parts = entry.path.split('/');
    for (let i = 1; i < parts.length; i += 1) {
      const dir = parts.slice(0, i).join('/');
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
 */
export async function diskTree(root: string): Promise<DiskTree> {
  const entries: TreeEntry[] = [];
  const writable: string[] = [];
  const foreign: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const subdirectories: [string, string][] = [];
    for (const name of readdirSync(dir).sort()) {
      if (prefix === '' && (name === GENERATION_MANIFEST || name === GENERATION_ARTIFACT)) continue;
      const path = prefix === '' ? name : `${prefix}/${name}`;
      const absolute = join(dir, name);
      const stats = lstatSync(absolute);
      if (stats.isDirectory()) {
        if ((stats.mode & 0o777) !== 0o555) writable.push(path);
        entries.push({ path, type: 'directory' });
        subdirectories.push([absolute, path]);
      } else if (stats.isFile()) {
        if ((stats.mode & 0o777) !== 0o444) writable.push(path);
        const data = readFileSync(absolute);
        entries.push({ path, type: 'file', sha256: sha256Hex(data), size: data.length });
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
