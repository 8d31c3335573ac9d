/**
 * Semantic version precedence (semver.org §11), pure and dependency-free: what `fleet version`
 * compares a runtime's version with fleet.yaml's `canonicalVersion` by.
 */

export interface ParsedSemver {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Pre-release identifiers (`1.2.0-rc.1` → `['rc', '1']`); empty for a release. */
  readonly prerelease: readonly string[];
}

const SEMVER =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** Parses `MAJOR.MINOR.PATCH[-PRE][+BUILD]` (a leading `v` allowed); `null` when it is not one. */
export function parseSemver(text: string): ParsedSemver | null {
  const match = SEMVER.exec(text.trim());
  if (!match) return null;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease: match[4] === undefined ? [] : match[4].split('.'),
  };
}

function compareIdentifiers(a: string, b: string): number {
  const numA = /^\d+$/.test(a);
  const numB = /^\d+$/.test(b);
  if (numA && numB) return Math.sign(Number(a) - Number(b));
  if (numA) return -1; // numeric identifiers have lower precedence
  if (numB) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * -1, 0 or 1 as `a` is older than, equal to (build metadata ignored) or newer than `b`; `null`
 * when either is not a semantic version.
 */
export function compareSemver(a: string, b: string): -1 | 0 | 1 | null {
  const x = parseSemver(a);
  const y = parseSemver(b);
  if (!x || !y) return null;
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (x[key] !== y[key]) return x[key] < y[key] ? -1 : 1;
  }
  if (x.prerelease.length === 0 || y.prerelease.length === 0) {
    if (x.prerelease.length === y.prerelease.length) return 0;
    return x.prerelease.length === 0 ? 1 : -1; // a release outranks its pre-releases
  }
  const n = Math.max(x.prerelease.length, y.prerelease.length);
  for (let i = 0; i < n; i += 1) {
    const p = x.prerelease[i];
    const q = y.prerelease[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const c = compareIdentifiers(p, q);
    if (c !== 0) return c as -1 | 1;
  }
  return 0;
}
