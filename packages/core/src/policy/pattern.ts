/**
 * Home-path patterns of the node policy (docs/node-policy.md, contract §5.1): where a host's
 * variables may move a domain's file, and which paths a domain whose paths come from the repo may
 * manage. Pure: no filesystem, no platform.
 *
 * Syntax: a `~/` path whose segments are literal names, or globs where `*` stands for any run of
 * characters within one segment (never `/`), or `**` alone as a segment for zero or more whole
 * segments. Nothing else is special (no `?`, no `[…]`, no braces). Every literal part obeys the
 * rules of a node path (core `parseHomePath`): no `..` or `.` segment, no empty segment, no NUL,
 * no backslash, nothing that would escape the home on any platform. The first segment must not be
 * `**`: `~/**` would hand the whole home (`~/.ssh` included) to a write credential. A pattern
 * never matches fleet's own state, whatever it says — callers check {@link isFleetOwnPath} first.
 */
import { FleetError } from '../errors.js';
import { parseHomePath } from '../paths.js';
import { isFleetOwnPath } from './fleet-paths.js';

type Segment =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'glob'; readonly parts: readonly string[] }
  | { readonly kind: 'globstar' };

/** A validated pattern, ready to match. */
export interface HomePattern {
  readonly source: string;
  readonly segments: readonly Segment[];
}

function invalid(pattern: string, why: string): FleetError {
  return new FleetError(
    'PATH_INVALID',
    `pattern ${JSON.stringify(pattern)} is not allowed: ${why}`,
  );
}

/** Validates `pattern` (`PATH_INVALID` with the reason) and compiles it. */
export function parseHomePattern(pattern: string): HomePattern {
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
  if (segments[0]?.kind === 'globstar') {
    throw invalid(pattern, 'the first segment cannot be ** (it would match the whole home)');
  }
  // The literal parts must be a valid node path: wildcards stand in as a plain letter.
  try {
    parseHomePath(`~/${raw.map((s) => (s === '**' ? 'x' : s.replaceAll('*', 'x'))).join('/')}`);
  } catch (error) {
    const why = (error as Error).message.replace(/^path .* is not allowed: /, '');
    throw invalid(pattern, why);
  }
  return { source: pattern, segments };
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
 * matches; matching is case-sensitive (a policy names paths exactly).
 */
export function matchHomePattern(pattern: HomePattern | string, path: string): boolean {
  const compiled = typeof pattern === 'string' ? parseHomePattern(pattern) : pattern;
  let components: readonly string[];
  try {
    components = parseHomePath(path);
  } catch {
    return false;
  }
  return matchSegments(compiled.segments, components);
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
