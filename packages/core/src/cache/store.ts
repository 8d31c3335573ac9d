/**
 * fleet's operator-side cache (contract §14, "means": no per-call work that a cache keyed by git
 * object ids can skip). It lives under the repository's git directory, `.git/fleet-cache/`, where
 * nothing is versioned or pushed: deleting it is always safe, it is only rebuilt.
 *
 * One file per kind of entry (`repo-v1.json`: the parsed fleet.yaml and hosts/*.yaml, see
 * `repo/load.ts`; the history line indexes are the next kind, keyed by the canonical file's
 * history). A file is a header line — `{ format, sha256 }`, the sha256 of the rest — and the body,
 * one JSON document. A file that is torn, corrupt, foreign (another format) or unreadable is
 * treated as absent and rewritten by the next load; a cache is never a reason for a verb to fail.
 *
 * The body is trusted once its checksum matches: it was written by fleet from values that had
 * passed their schemas, and it sits in the same git directory as the history it summarises.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

export const CACHE_DIR = 'fleet-cache';

const headerSchema = z.lazy(() =>
  z.strictObject({
    format: z.string().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

/**
 * The git object id of a blob with these bytes (`git hash-object`): sha1 over `blob <size>\0`
 * and the content. Computed here, so no git process runs to key the cache.
 */
export function blobId(bytes: Uint8Array): string {
  return createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');
}

/**
 * The git directory of the work tree at `root` (`root/.git`, or the directory a worktree's or
 * submodule's `.git` file names), or `null` when `root` is not the top of a git work tree.
 */
export function gitDirOf(root: string): string | null {
  const dotGit = join(root, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
    const pointer = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
    if (!pointer) return null;
    return isAbsolute(pointer) ? pointer : resolve(root, pointer);
  } catch {
    return null;
  }
}

/** The cache directory of the repository at `root`, or `null` (not a git work tree: no cache). */
export function cacheDirOf(root: string): string | null {
  const gitDir = gitDirOf(root);
  return gitDir === null ? null : join(gitDir, CACHE_DIR);
}

/** The body of cache file `name` in `dir` when it is intact and of `format`; else `undefined`. */
export function readCacheFile(dir: string, name: string, format: string): unknown {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dir, name));
  } catch {
    return undefined;
  }
  const newline = bytes.indexOf(0x0a);
  if (newline === -1) return undefined;
  try {
    const header = headerSchema.safeParse(JSON.parse(bytes.subarray(0, newline).toString('utf8')));
    if (!header.success || header.data.format !== format) return undefined;
    const body = bytes.subarray(newline + 1);
    if (createHash('sha256').update(body).digest('hex') !== header.data.sha256) return undefined;
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Replaces cache file `name` in `dir` (created 0700) atomically: a temp file renamed over it, so a
 * reader sees the old file or the new one. Best effort: returns false instead of throwing.
 */
export function writeCacheFile(dir: string, name: string, format: string, body: unknown): boolean {
  const text = Buffer.from(JSON.stringify(body), 'utf8');
  const header = JSON.stringify({
    format,
    sha256: createHash('sha256').update(text).digest('hex'),
  });
  const target = join(dir, name);
  const temp = join(dirname(target), `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(temp, Buffer.concat([Buffer.from(`${header}\n`, 'utf8'), text]), {
      mode: 0o600,
    });
    renameSync(temp, target);
    return true;
  } catch {
    try {
      unlinkSync(temp);
    } catch {
      // nothing was written
    }
    return false;
  }
}
