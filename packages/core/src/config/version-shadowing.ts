/**
 * PATH shadowing (contract §11, docs/version.md): the decision table of which executable along the
 * node's PATH hides a later, better one, and the `shadowing` items of the `fleet` executables it
 * amounts to. The probed tools' own shadowing items use the same table (version-items.ts).
 */
import type { VersionItem } from '../report/version-report.js';
import { compareSemver } from '../semver.js';
import type { FleetOnPath } from '../wire/versions.js';

export interface Shadowing {
  /** The earlier `fleet` that a shell runs instead. */
  readonly path: string;
  readonly reason: 'dead' | 'older';
  /** The later, better `fleet` it hides. */
  readonly shadows: string;
  readonly detail: string;
}

/**
 * The decision table of PATH shadowing: an entry shadows when a LATER entry is runnable and the
 * earlier one is dead (not runnable), or both report versions and the earlier one's is older.
 * A later dead entry never matters (the earlier one runs); entries of equal version, or whose
 * version cannot be compared, do not shadow. Each shadowing entry names the first later entry
 * it hides (for `older`, the newest later one).
 */
export function findShadowing(entries: readonly FleetOnPath[]): Shadowing[] {
  const out: Shadowing[] = [];
  entries.forEach((entry, index) => {
    const later = entries.slice(index + 1).filter((e) => e.runnable);
    if (later.length === 0) return;
    if (!entry.runnable) {
      const hidden = later[0] as FleetOnPath;
      out.push({
        path: entry.path,
        reason: 'dead',
        shadows: hidden.path,
        detail: `${entry.path} (${entry.detail}) comes first on PATH and hides ${hidden.path}${
          hidden.version ? ` (${hidden.version})` : ''
        }`,
      });
      return;
    }
    if (entry.version === null) return;
    let newest: FleetOnPath | undefined;
    for (const candidate of later) {
      if (candidate.version === null) continue;
      if (compareSemver(candidate.version, newest?.version ?? entry.version) === 1) {
        newest = candidate;
      }
    }
    if (newest) {
      out.push({
        path: entry.path,
        reason: 'older',
        shadows: newest.path,
        detail: `${entry.path} (${entry.version}) comes first on PATH and hides the newer ${newest.path} (${newest.version})`,
      });
    }
  });
  return out;
}

/**
 * The `fleet` executables along the PATH: a `stale` item for each that shadows, else one `current`
 * item (none when there is no `fleet` on it).
 */
export function shadowingItems(entries: readonly FleetOnPath[]): VersionItem[] {
  const base = { layer: 'version' as const, kind: 'shadowing' as const };
  const found = findShadowing(entries);
  if (found.length > 0) {
    return found.map((s) => ({
      ...base,
      name: 'PATH',
      path: s.path,
      state: 'stale',
      detail: s.detail,
    }));
  }
  if (entries.length === 0) return [];
  const first = entries[0] as FleetOnPath;
  return [
    {
      ...base,
      name: 'PATH',
      path: first.path,
      state: 'current',
      detail: `${entries.length} fleet on PATH; no shadowing`,
      ...(first.version ? { version: first.version } : {}),
    },
  ];
}
