/**
 * A domain's repository manifest as its plugin parsed it (`Installer.repoFiles`: the files
 * domain's `domains/files/files.yaml`, contract §10.4), kept under `.git/fleet-cache/` (contract
 * §14, "means": no per-call work a cache keyed by git object ids can skip). Keyed by the plugin
 * (name and version), the domain and the manifest's blob id: the same bytes parsed by the same
 * plugin give the same files. A linked plugin (`type: link`, code that changes without a new
 * version) is never cached. What comes out of the cache goes through the same checks as a fresh
 * parse (`withRepoFiles`); a parse that throws is never kept. Like every file there
 * (`cache/store.ts`), a torn, corrupt or foreign file is a miss; deleting it is always safe.
 */
import { createHash } from 'node:crypto';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import type { ManagedFile } from '../interfaces/domain.js';
import type { Installer } from '../interfaces/installer.js';
import type { PluginRef } from '../interfaces/registration.js';
import { blobId, readCacheFile, writeCacheFile } from './store.js';

const REPO_FILES_CACHE_FILE = 'repo-files-v1.json';
const REPO_FILES_CACHE_FORMAT = 'fleet.repo-files-cache/v1';
/** Entries kept (one per plugin, domain and manifest version seen): the newest win. */
export const REPO_FILES_CACHE_ENTRIES = 32;

const entrySchema = z.lazy(() =>
  z.strictObject({
    key: z.string(),
    files: z.array(z.unknown()),
    hostVariables: z.array(z.string()),
  }),
);
const bodySchema = z.lazy(() => z.strictObject({ entries: z.array(entrySchema) }));
type Body = z.infer<typeof bodySchema>;

/** The cache key of one parse: the plugin, the domain, and the manifest's git blob id. */
export function repoFilesCacheKey(plugin: PluginRef, domain: string, manifest: string): string {
  return createHash('sha256')
    .update(
      JSON.stringify([plugin.name, plugin.version, domain, blobId(Buffer.from(manifest, 'utf8'))]),
    )
    .digest('hex');
}

function readBody(cacheDir: string): Body {
  const parsed = bodySchema.safeParse(
    readCacheFile(cacheDir, REPO_FILES_CACHE_FILE, REPO_FILES_CACHE_FORMAT),
  );
  return parsed.success ? parsed.data : { entries: [] };
}

/**
 * `repoFiles` answered from `cacheDir` for a manifest this plugin already parsed there, else
 * parsed and kept. `cacheDir` `null` (no git directory) or a linked plugin: `repoFiles` itself.
 */
export function cachedRepoFiles(
  cacheDir: string | null,
  plugin: PluginRef,
  domain: string,
  repoFiles: NonNullable<Installer['repoFiles']>,
): NonNullable<Installer['repoFiles']> {
  if (cacheDir === null || plugin.type === 'link') return repoFiles;
  return (manifest, source) => {
    const key = repoFilesCacheKey(plugin, domain, manifest);
    const body = readBody(cacheDir);
    const hit = body.entries.find((entry) => entry.key === key);
    // The files are checked by withRepoFiles (repoManagedFileSchema) like a fresh parse's.
    if (hit)
      return {
        files: hit.files as ManagedFile[],
        hostVariables: hit.hostVariables,
      };
    const parsed = repoFiles(manifest, source);
    const entry = { key, files: [...parsed.files], hostVariables: [...parsed.hostVariables] };
    const entries = [entry, ...body.entries].slice(0, REPO_FILES_CACHE_ENTRIES);
    writeCacheFile(cacheDir, REPO_FILES_CACHE_FILE, REPO_FILES_CACHE_FORMAT, { entries });
    return parsed;
  };
}
