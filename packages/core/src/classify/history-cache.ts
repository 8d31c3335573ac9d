/**
 * The history cache (contract §14, "means": history read once, and not again while nothing
 * changed): the canonical files' snapshot that `readCanonicalSnapshot` reads from git — every
 * published version of each file, and each file at the commit — kept under `.git/fleet-cache/`
 * keyed by git object ids. A commit id names its whole history, so the snapshot of (commit,
 * paths, directories) never changes: an entry is valid exactly when its commit and its paths are
 * the ones asked for. A new commit (any commit: the history is re-read, not patched) makes the
 * next call read git again and replace the entry.
 *
 * One file per set of paths (`history-v1-<hash of the paths>.json`), holding the newest commit's
 * snapshot only, so the cache stays as large as the histories it spares and no larger. Like every
 * file there (`cache/store.ts`), a torn, corrupt, foreign or mismatching file is a miss, and
 * deleting the directory is always safe.
 */
import { createHash } from 'node:crypto';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { readCanonicalSnapshot, type CanonicalSnapshot, type CanonicalVersion } from './history.js';
import type { Git } from '../git.js';
import type { CanonicalSource } from '../repo/sources.js';
import { readCacheFile, writeCacheFile } from '../cache/store.js';
import { corePackageVersion } from '../package-version.js';

/** Snapshots larger than this (serialized) are read from git every time rather than kept. */
export const HISTORY_CACHE_MAX_BYTES = 32 * 1024 * 1024;

const COMMIT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

const versionSchema = z.lazy(() =>
  z.strictObject({
    commit: z.string().regex(COMMIT_ID),
    date: z.string(),
    content: z.string(),
    encoding: z.literal('base64').optional(),
  }),
);

const sourceSchema = z.lazy(() =>
  z.union([
    z.strictObject({
      executable: z.boolean(),
      target: z.string().optional(),
      binary: z.string().optional(),
    }),
    z.strictObject({ problem: z.string() }),
  ]),
);

const historyCacheBodySchema = z.lazy(() =>
  z.strictObject({
    commit: z.string().regex(COMMIT_ID),
    paths: z.array(z.string()),
    directories: z.array(z.string()),
    atRef: z.record(z.string(), z.string().nullable()),
    history: z.record(z.string(), z.array(versionSchema)),
    /** What git records of each source (`repo/sources.ts`): a body without it is an older one. */
    sources: z.record(z.string(), sourceSchema),
  }),
);
export type HistoryCacheBody = z.infer<typeof historyCacheBodySchema>;

/** What a snapshot is of: the commit and the paths and directories whose history it holds. */
export interface HistoryCacheKey {
  readonly commit: string;
  readonly paths: readonly string[];
  readonly directories: readonly string[];
}

/** The cache file holding snapshots of this set of paths (whatever the commit). */
export function historyCacheFileName(key: Pick<HistoryCacheKey, 'paths' | 'directories'>): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([[...key.paths].sort(), [...key.directories].sort()]))
    .digest('hex')
    .slice(0, 16);
  return `history-v1-${hash}.json`;
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => {
  const x = [...a].sort();
  const y = [...b].sort();
  return x.length === y.length && x.every((item, i) => item === y[i]);
};

/** The snapshot as a cache body (plain JSON). */
export function historyCacheBody(
  key: HistoryCacheKey,
  snapshot: CanonicalSnapshot,
): HistoryCacheBody {
  return {
    commit: snapshot.commit,
    paths: [...key.paths],
    directories: [...key.directories],
    atRef: Object.fromEntries(snapshot.atRef),
    sources: Object.fromEntries(snapshot.sources ?? []),
    history: Object.fromEntries(
      [...snapshot.history].map(([path, versions]) => [
        path,
        versions.map(({ commit, date, content, encoding }) => ({
          commit,
          date,
          content,
          ...(encoding === undefined ? {} : { encoding }),
        })),
      ]),
    ),
  };
}

/**
 * The snapshot a cache body holds when it is one for exactly `key`; `undefined` otherwise (not a
 * body, another commit, other paths — a miss, never an error).
 */
export function snapshotFromCacheBody(
  key: HistoryCacheKey,
  body: unknown,
): CanonicalSnapshot | undefined {
  const parsed = historyCacheBodySchema.safeParse(body);
  if (!parsed.success) return undefined;
  const entry = parsed.data;
  if (entry.commit !== key.commit) return undefined;
  if (!sameList(entry.paths, key.paths) || !sameList(entry.directories, key.directories)) {
    return undefined;
  }
  // Every path asked for is in the entry (a body naming the paths but missing one is not ours).
  if (
    key.paths.some(
      (path) => !Object.hasOwn(entry.atRef, path) || !Object.hasOwn(entry.history, path),
    )
  ) {
    return undefined;
  }
  return {
    commit: entry.commit,
    atRef: new Map(Object.entries(entry.atRef)),
    sources: new Map(
      Object.entries(entry.sources).map(([path, source]): [string, CanonicalSource] => [
        path,
        'problem' in source
          ? { problem: source.problem }
          : {
              executable: source.executable,
              ...(source.target === undefined ? {} : { target: source.target }),
              ...(source.binary === undefined ? {} : { binary: source.binary }),
            },
      ]),
    ),
    history: new Map<string, readonly CanonicalVersion[]>(Object.entries(entry.history)),
  };
}

let historyCacheFormat: string | undefined;
/** The format names the core version: another version's reading of history is not reused. */
function historyCacheFormatOf(): string {
  if (historyCacheFormat === undefined) {
    historyCacheFormat = `fleet.history-cache/v1 @fleet/core@${corePackageVersion()}`;
  }
  return historyCacheFormat;
}

/**
 * `readCanonicalSnapshot(git, paths, commit, directories)`, answered from the cache in `cacheDir`
 * when it holds this commit's snapshot of these paths, else read from git and kept there.
 * `cacheDir` `null` (no git directory to keep it in): always read from git.
 */
export async function readCanonicalSnapshotCached(
  git: Git,
  cacheDir: string | null,
  key: HistoryCacheKey,
): Promise<CanonicalSnapshot> {
  if (cacheDir === null || !COMMIT_ID.test(key.commit)) {
    return readCanonicalSnapshot(git, key.paths, key.commit, key.directories);
  }
  const name = historyCacheFileName(key);
  const format = historyCacheFormatOf();
  const cached = snapshotFromCacheBody(key, readCacheFile(cacheDir, name, format));
  if (cached !== undefined) return cached;
  const snapshot = await readCanonicalSnapshot(git, key.paths, key.commit, key.directories);
  const body = historyCacheBody(key, snapshot);
  if (serializedSize(body) <= HISTORY_CACHE_MAX_BYTES) writeCacheFile(cacheDir, name, format, body);
  return snapshot;
}

/** The body's JSON size, estimated without serializing it twice (escapes aside). */
function serializedSize(body: HistoryCacheBody): number {
  let size = 0;
  for (const versions of Object.values(body.history)) {
    for (const version of versions) size += version.content.length * 2 + 128;
  }
  for (const content of Object.values(body.atRef)) size += (content?.length ?? 0) * 2 + 64;
  return size;
}
