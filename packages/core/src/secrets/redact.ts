/**
 * Redaction of everything that leaves a node (contract §4, §15; docs/secrets.md): every secret
 * value the node knows — the current env-file chain and the values it resolved earlier that a live
 * file or a backup may still hold (rotated or removed since) — replaced by its
 * `{{ secret.NAME }}` placeholder, longest value first, in one pass.
 *
 * Two kinds of text, told apart by the caller, never guessed from the text:
 * - **content** (a file's bytes as text, a diff of them): every occurrence is replaced;
 * - **annotations** (error messages, action details, prober facts — text the node and its domains
 *   write *about* files): the same, except inside a sha256 digest (or a git commit id) — a maximal
 *   run of exactly 64 (or 40) lowercase hex digits. A digest is what the node publishes anyway
 *   (inventory, receipts); rewriting a piece of it corrupts the fact and, next to the published
 *   digest, reveals the very value it hid (catalogue 41). A digest that *is* a secret value is
 *   still replaced.
 *
 * Values shorter than {@link SECRET_MIN_LENGTH} are never redacted: resolution refuses them
 * (`SECRET_TOO_SHORT`), so fleet never writes one, and replacing `30` or `a` wherever it occurs
 * would mangle ordinary text and point at the value instead of hiding it.
 */
import type { JsonValue } from '../interfaces/drift.js';
import type { SecretValues } from '../interfaces/node-context.js';
import { placeholder } from '../render/template.js';
import { compareCodeUnits } from '../compare.js';

/** The shortest secret value fleet resolves and redacts (contract §4). */
export const SECRET_MIN_LENGTH = 8;

/** A value the node resolved earlier, under the name it last had in the chain. */
export interface RememberedSecret {
  readonly name: string;
  readonly value: string;
}

export interface Redactor {
  /** File content (or a diff of it): every known value replaced by its placeholder. */
  content(text: string): string;
  /** Text about files (messages, details, fact strings): the same, digests left whole. */
  annotation(text: string): string;
  /** A JSON value of facts: every key and string as an annotation; numbers and booleans as they are. */
  json(value: JsonValue): JsonValue;
  /** The names whose value occurs in `text` (content rules). */
  namesIn(text: string): string[];
  /**
   * The names `text` holds an earlier value of: a remembered value whose name the chain now gives
   * another value (rotated). Names only: what drift may say without revealing a value.
   */
  rotatedIn(text: string): string[];
}

/** A maximal run of 64 or 40 lowercase hex digits: a sha256 digest or a git commit id. */
const DIGEST = /(?<![0-9a-f])(?:[0-9a-f]{64}|[0-9a-f]{40})(?![0-9a-f])/g;

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Builds the redactor for a node: `current` is its env-file chain now, `remembered` what it
 * resolved before. A value in both maps to its current name; a remembered value whose name has
 * left the chain keeps that name (docs/secrets.md: the file still needs that secret, and an
 * install of it then fails with `SECRET_MISSING` naming it).
 */
export function createRedactor(
  current: SecretValues,
  remembered: Iterable<RememberedSecret> = [],
): Redactor {
  const byValue = secretsByValue(current, remembered);
  const values = [...byValue.keys()].sort((a, b) => b.length - a.length || compareCodeUnits(a, b));
  const pattern =
    values.length === 0 ? undefined : new RegExp(values.map(escapeRegExp).join('|'), 'g');
  const replace = (value: string) => placeholder('secret', byValue.get(value) as string);

  const content = (text: string): string =>
    pattern === undefined ? text : text.replace(pattern, replace);

  const annotation = (text: string): string =>
    pattern === undefined ? text : redactOutsideDigests(text, pattern, replace);

  const json = (value: JsonValue): JsonValue => {
    if (typeof value === 'string') return annotation(value);
    if (Array.isArray(value)) return value.map((item: JsonValue) => json(item));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, JsonValue> = {};
      for (const [key, item] of Object.entries(value)) out[annotation(key)] = json(item);
      return out;
    }
    return value;
  };

  const namesIn = (text: string): string[] => {
    if (pattern === undefined) return [];
    const names = new Set<string>();
    for (const match of text.matchAll(new RegExp(pattern.source, 'g'))) {
      names.add(byValue.get(match[0]) as string);
    }
    return [...names].sort();
  };

  const currentValues = new Set(current.values());
  const rotatedIn = (text: string): string[] => {
    if (pattern === undefined) return [];
    const names = new Set<string>();
    for (const match of text.matchAll(new RegExp(pattern.source, 'g'))) {
      const name = byValue.get(match[0]) as string;
      // A name no longer in the chain was removed, not rotated: an install says SECRET_MISSING.
      if (!currentValues.has(match[0]) && current.has(name)) names.add(name);
    }
    return [...names].sort();
  };

  return { content, annotation, json, namesIn, rotatedIn };
}

/** Each secret value long enough to redact, with the name it is redacted to (see createRedactor). */
function secretsByValue(
  current: SecretValues,
  remembered: Iterable<RememberedSecret>,
): Map<string, string> {
  const byValue = new Map<string, string>();
  const add = (entries: [string, string][]) => {
    entries
      .filter(([, value]) => value.length >= SECRET_MIN_LENGTH)
      .sort(([an], [bn]) => compareCodeUnits(an, bn))
      .forEach(([name, value]) => {
        if (!byValue.has(value)) byValue.set(value, name);
      });
  };
  add([...current.entries()]);
  add([...remembered].map((entry): [string, string] => [entry.name, entry.value]));
  return byValue;
}

/** `text` with each match of `pattern` replaced, except inside a digest it is a strict part of. */
function redactOutsideDigests(
  text: string,
  pattern: RegExp,
  replace: (value: string) => string,
): string {
  const digests = [...text.matchAll(DIGEST)].map((m) => ({
    from: m.index,
    to: m.index + m[0].length,
  }));
  const inDigest = (start: number, end: number) =>
    digests.some(({ from, to }) => from <= start && end <= to && end - start < to - from);
  let out = '';
  let last = 0;
  const scan = new RegExp(pattern.source, 'g');
  for (let match = scan.exec(text); match !== null; match = scan.exec(text)) {
    const start = match.index;
    const end = start + match[0].length;
    if (inDigest(start, end)) {
      scan.lastIndex = start + 1; // a shorter value, or one straddling the digest, may start later
      continue;
    }
    out += text.slice(last, start) + replace(match[0]);
    last = end;
  }
  return out + text.slice(last);
}
