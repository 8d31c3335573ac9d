/**
 * Home-path patterns of the node policy (docs/node-policy.md, contract §5.1): where a host's
 * variables may move a domain's file, and which paths a domain whose paths come from the repo may
 * manage. Pure: no filesystem, no platform.
 *
 * Syntax: a `~/` path whose segments are literal names, or globs where `*` stands for any run of
 * characters within one segment (never `/`), or `**` alone as a segment for zero or more whole
 * segments — one or more when it is the last segment: `dir/**` is what lies under `dir`, never
 * `dir` itself (an install of `dir` as a file would take the directory's place). Nothing else is
 * special (no `?`, no `[…]`, no braces). Every literal part obeys the rules of a node path (core
 * `parseHomePath`): no `..` or `.` segment, no empty segment, no NUL, no backslash, no 8.3 short
 * name, nothing that would escape the home on any platform. The first segment must not be `**`:
 * `~/**` would hand the whole home (`~/.ssh` included) to a write credential; a first segment that
 * is a glob (`~/*` + `/**`, `~/.*` + `/**`) reaches every directory of the home and is a *broad*
 * pattern, which a policy must mark (`broad: true`, schema.ts). A pattern never matches fleet's own
 * state, whatever it says — callers check {@link isFleetOwnPath} first.
 *
 * Matching is folded (fold.ts): full Unicode case folding and NFKC on both sides, so a pattern
 * means the same on a case-sensitive home and on a case-folding APFS or NTFS volume.
 */
import { FleetError } from '../errors.js';
import { parseHomePath } from '../paths.js';
import { isFleetOwnPath } from './fleet-paths.js';
import { foldPath } from './fold.js';

type Segment =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'glob'; readonly parts: readonly string[] }
  | { readonly kind: 'globstar' };

/** A validated pattern, ready to match. */
export interface HomePattern {
  readonly source: string;
  /** As written (what {@link patternReachesFleetState} and messages read). */
  readonly segments: readonly Segment[];
  /** Folded (fold.ts), what matching compares. */
  readonly folded: readonly Segment[];
}

function foldSegment(segment: Segment): Segment {
  if (segment.kind === 'literal') return { kind: 'literal', text: foldPath(segment.text) };
  if (segment.kind === 'glob') return { kind: 'glob', parts: segment.parts.map(foldPath) };
  return segment;
}

function invalid(pattern: string, why: string): FleetError {
  return new FleetError(
    'PATH_INVALID',
    `pattern ${JSON.stringify(pattern)} is not allowed: ${why}`,
  );
}

/** Validates `pattern` (`PATH_INVALID` with the reason) and compiles it. */
export function parseHomePattern(pattern: string): HomePattern {
  return compilePattern(pattern, false);
}

/**
 * A pattern of one of core's own lists (code-bearing.ts), which may begin with `**`
 * (`~/` + `**` + `/.git/**`: a repository anywhere in the home). Never a policy's.
 */
export function parseListPattern(pattern: string): HomePattern {
  return compilePattern(pattern, true);
}

function compilePattern(pattern: string, leadingGlobstar: boolean): HomePattern {
  if (typeof pattern !== 'string' || !pattern.startsWith('~/')) {
    throw invalid(String(pattern), 'must start with ~/ (the node home)');
  }
  const raw = pattern.slice(2).split('/');
  const segments: Segment[] = raw.map((segment) => {
    if (segment === '**') return { kind: 'globstar' };
    if (segment.includes('**')) throw invalid(pattern, '** must be a whole segment');
    if (segment.includes('*')) return { kind: 'glob', parts: segment.split('*') };
    return { kind: 'literal', text: segment };
  });
  if (segments[0]?.kind === 'globstar' && !leadingGlobstar) {
    throw invalid(pattern, 'the first segment cannot be ** (it would match the whole home)');
  }
  // The literal parts must be a valid node path: wildcards stand in as a plain letter.
  try {
    parseHomePath(`~/${raw.map((s) => (s === '**' ? 'x' : s.replaceAll('*', 'x'))).join('/')}`);
  } catch (error) {
    const why = (error as Error).message.replace(/^path .* is not allowed: /, '');
    throw invalid(pattern, why);
  }
  return { source: pattern, segments, folded: segments.map(foldSegment) };
}

/**
 * True when the pattern's first segment is a glob (`~/*` + `/**`, `~/.*`): it reaches into every
 * directory of the home, `~/.ssh` and `~/.config/systemd` included. A policy must say
 * `broad: true` next to such a pattern (docs/node-policy.md).
 */
export function isBroadPattern(pattern: HomePattern | string): boolean {
  const compiled = typeof pattern === 'string' ? parseHomePattern(pattern) : pattern;
  return compiled.segments[0]?.kind !== 'literal';
}

/** True when `pattern` is acceptable to {@link parseHomePattern}. */
export function isHomePattern(pattern: string): boolean {
  try {
    parseHomePattern(pattern);
    return true;
  } catch {
    return false;
  }
}

function matchGlob(parts: readonly string[], text: string): boolean {
  const [first, ...rest] = parts as [string, ...string[]];
  if (!text.startsWith(first)) return false;
  let at = first.length;
  const last = rest.pop() ?? '';
  for (const part of rest) {
    const found = text.indexOf(part, at);
    if (found < 0) return false;
    at = found + part.length;
  }
  return text.length - at >= last.length && text.endsWith(last);
}

function matchSegments(segments: readonly Segment[], components: readonly string[]): boolean {
  if (segments.length === 0) return components.length === 0;
  const [head, ...tail] = segments as [Segment, ...Segment[]];
  if (head.kind === 'globstar') {
    // A last `**` stands for one segment or more: `dir/**` never matches `dir` itself.
    if (tail.length === 0) return components.length > 0;
    for (let skip = 0; skip <= components.length; skip += 1) {
      if (matchSegments(tail, components.slice(skip))) return true;
    }
    return false;
  }
  const [component, ...rest] = components;
  if (component === undefined) return false;
  const ok = head.kind === 'literal' ? head.text === component : matchGlob(head.parts, component);
  return ok && matchSegments(tail, rest);
}

/**
 * True when the node path `path` matches `pattern`. A path that is not a valid node path never
 * matches; both are compared folded (fold.ts).
 */
export function matchHomePattern(pattern: HomePattern | string, path: string): boolean {
  const compiled = typeof pattern === 'string' ? parseHomePattern(pattern) : pattern;
  let components: readonly string[];
  try {
    components = parseHomePath(path);
  } catch {
    return false;
  }
  return matchSegments(compiled.folded, components.map(foldPath));
}

/** Whether one segment each of two patterns can match one same component (prefix and suffix). */
function segmentsMeet(a: Segment, b: Segment): boolean {
  if (a.kind === 'literal' && b.kind === 'literal') return a.text === b.text;
  if (a.kind === 'literal' && b.kind === 'glob') return matchGlob(b.parts, a.text);
  if (a.kind === 'glob' && b.kind === 'literal') return matchGlob(a.parts, b.text);
  if (a.kind !== 'glob' || b.kind !== 'glob') return true;
  // Two globs: their fixed starts and ends must agree (the middle parts are taken to fit, which
  // can only say "overlap" too often — the safe side for a warning).
  const [aStart, aEnd] = [a.parts[0] ?? '', a.parts.at(-1) ?? ''];
  const [bStart, bEnd] = [b.parts[0] ?? '', b.parts.at(-1) ?? ''];
  return (
    (aStart.startsWith(bStart) || bStart.startsWith(aStart)) &&
    (aEnd.endsWith(bEnd) || bEnd.endsWith(aEnd))
  );
}

function overlap(a: readonly Segment[], b: readonly Segment[]): boolean {
  const [aHead, ...aTail] = a;
  const [bHead, ...bTail] = b;
  if (aHead === undefined || bHead === undefined) {
    return aHead === undefined && bHead === undefined;
  }
  if (aHead.kind === 'globstar') {
    // A last `**` is one segment or more: any rest of `b` that is not empty can be it.
    if (aTail.length === 0) return true;
    return overlap(aTail, b) || overlap(a, bTail);
  }
  if (bHead.kind === 'globstar') {
    if (bTail.length === 0) return true;
    return overlap(a, bTail) || overlap(aTail, b);
  }
  return segmentsMeet(aHead, bHead) && overlap(aTail, bTail);
}

/**
 * True when some node path matches both patterns (folded), e.g. `~/.config/**` and
 * `~/.config/systemd/user/**`: how a policy's pattern is found to *cover* a code-bearing path.
 */
export function patternsOverlap(a: HomePattern, b: HomePattern): boolean {
  return overlap(a.folded, b.folded);
}

/**
 * True when a pattern is *about* fleet's own state: it names one of fleet's files exactly, or all
 * of it lies under one of fleet's directories (`~/.local/state/fleet/**`). A broader pattern
 * (`~/.config/**`) is accepted; its matches in fleet's state are refused at match time.
 */
export function patternReachesFleetState(pattern: HomePattern | string): boolean {
  const compiled = typeof pattern === 'string' ? parseHomePattern(pattern) : pattern;
  const prefix: string[] = [];
  for (const segment of compiled.segments) {
    if (segment.kind !== 'literal') break;
    prefix.push(segment.text);
  }
  return prefix.length > 0 && isFleetOwnPath(`~/${prefix.join('/')}`);
}

/**
 * The text of a policy's pattern entry (`'~/x'` or `{ pattern: '~/x', broad: true }`: schema.ts's
 * `PolicyPattern`, named by its shape here because the schema builds on this module).
 */
export function policyPatternText(entry: string | { readonly pattern: string }): string {
  return typeof entry === 'string' ? entry : entry.pattern;
}
