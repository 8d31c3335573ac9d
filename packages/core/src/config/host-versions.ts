/**
 * Each host's earlier variable sets, from the history of its `hosts/<host>.yaml` (contract §8.1):
 * a version of a canonical file was published for a host rendered with the variables of the time,
 * so the assessment (assessment.ts) classifies against those too. Each version's parse is kept by
 * blob id in `.git/fleet-cache` (`cache/store.ts`).
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { blobId, cacheDirOf, readCacheFile, writeCacheFile } from '../cache/store.js';
import type { CanonicalSnapshot } from '../classify/history.js';
import {
  HOSTS_DIR,
  cachedHostVariablesOf,
  hostVariables,
  parseHostVariables,
  type FleetRepo,
} from '../repo/load.js';

const HOST_VERSIONS_CACHE_FILE = 'host-versions-v1.json';
const HOST_VERSIONS_CACHE_FORMAT = 'fleet.host-versions-cache/v1';
/** Earlier host files, by blob id: their variables, or `null` for one that never validated. */
const hostVersionsCacheSchema = z.lazy(() =>
  z.record(z.string(), z.record(z.string(), z.string()).nullable()),
);

/**
 * Each host's variables as they were in the repo's history, other than the current ones: a
 * version of a canonical file was published for a host rendered with the host's variables of
 * the time (a node-id change must leave the old id's rendering published, not local). Every
 * version's parse is kept by blob id in `.git/fleet-cache` (content-addressed, so never stale):
 * a fleet of 1,000 hosts would otherwise parse 1,000 YAML files per drift.
 */
export function earlierHostVariables(
  repo: FleetRepo,
  history: CanonicalSnapshot['history'],
): Map<string, Readonly<Record<string, string>>[]> {
  const earlier = new Map<string, Readonly<Record<string, string>>[]>();
  const atHead = cachedHostVariablesOf(repo.root);
  const cacheDir = cacheDirOf(repo.root);
  const read =
    cacheDir === null
      ? undefined
      : hostVersionsCacheSchema.safeParse(
          readCacheFile(cacheDir, HOST_VERSIONS_CACHE_FILE, HOST_VERSIONS_CACHE_FORMAT),
        );
  const known: Record<string, Readonly<Record<string, string>> | null> = read?.success
    ? read.data
    : {};
  const seen: Record<string, Readonly<Record<string, string>> | null> = {};
  let parsed = false;
  for (const host of Object.keys(repo.manifest.hosts)) {
    const versions = history.get(`${HOSTS_DIR}/${host}.yaml`) ?? [];
    if (versions.length === 0) continue;
    const current = JSON.stringify(hostVariables(repo, host));
    const sets = new Map<string, Readonly<Record<string, string>>>();
    for (const version of versions) {
      const blob = blobId(Buffer.from(version.content, 'utf8'));
      let variables = atHead(version.content) ?? known[blob];
      if (variables === undefined) {
        parsed = true;
        try {
          variables = parseHostVariables(version.content, `${HOSTS_DIR}/${host}.yaml`);
        } catch {
          variables = null; // A version that never validated was never rendered for the host.
        }
      }
      seen[blob] = variables;
      if (variables === null) continue;
      const key = JSON.stringify(variables);
      if (key !== current && !sets.has(key)) sets.set(key, variables);
    }
    if (sets.size > 0) earlier.set(host, [...sets.values()]);
  }
  // Rewritten only when something was parsed; it keeps the versions this history holds.
  if (parsed && cacheDir !== null) {
    writeCacheFile(cacheDir, HOST_VERSIONS_CACHE_FILE, HOST_VERSIONS_CACHE_FORMAT, seen);
  }
  return earlier;
}
