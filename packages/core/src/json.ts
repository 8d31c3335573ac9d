/**
 * JSON parsing for untrusted input (files on disk, wire bodies). `JSON.parse` silently keeps the
 * last of duplicated keys and hands `__proto__` through as an own property; both are how a
 * validated-looking object says something other than what was checked (catalogue, "Hostile
 * JSON"). Here both are errors.
 */
import { FleetError, type ErrorCode } from './errors.js';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * How deep objects and arrays may nest in untrusted JSON. V8 parses far deeper input without
 * trouble, but everything after the parse (zod's `z.json()`, redaction, re-serialisation) recurses,
 * and 200,000 levels overflow the stack: a 500 for bad input (catalogue 39). No fleet document
 * comes near this.
 */
export const MAX_JSON_DEPTH = 256;

export type BadKey =
  | { readonly key: string; readonly duplicate: boolean; readonly tooDeep?: undefined }
  | { readonly tooDeep: true };

/** JSON's four whitespace characters (the text is valid JSON: no other can sit between tokens). */
const isJsonSpace = (code: number): boolean =>
  code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/** Index of the quote closing the string whose opening quote is at `start` (valid JSON). */
function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes += 1;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * Finds the first duplicated or forbidden key in `text`, which must already be valid JSON, or
 * nesting deeper than {@link MAX_JSON_DEPTH}. A single pass over the text with a stack of the keys
 * seen in each open object; it steps over each string whole (`indexOf` to its closing quote) and
 * looks at no other character twice. Every answer of a controller passes here, and every request
 * body a controller reads (contract §14: a 1,000-host drift is 1,000 of each), so it is a plain
 * loop over character codes: no regular expression, nothing allocated but the keys.
 */
export function findBadKey(text: string): BadKey | undefined {
  // The key sets of the open objects and arrays (`null` for an array), the innermost in `keys`.
  const stack: (Set<string> | null)[] = [];
  let keys: Set<string> | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22 /* " */) {
      const start = i;
      const end = closingQuote(text, start);
      i = end;
      if (keys === null) continue;
      let next = end + 1;
      while (isJsonSpace(text.charCodeAt(next))) next += 1;
      if (text.charCodeAt(next) !== 0x3a /* : */) continue;
      const raw = text.slice(start, end + 1);
      const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      if (FORBIDDEN_KEYS.has(key)) return { key, duplicate: false };
      if (keys.has(key)) return { key, duplicate: true };
      keys.add(key);
      i = next;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (stack.length >= MAX_JSON_DEPTH) return { tooDeep: true };
      stack.push(keys);
      keys = code === 0x7b ? new Set() : null;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      keys = stack.pop() ?? null;
    }
  }
  return undefined;
}

/** `JSON.parse` that refuses duplicate keys and prototype keys, with a one-line error. */
export function parseStrictJson(text: string, source: string, code: ErrorCode): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // V8's message quotes the input around the error: for a credentials file that is a token.
    throw new FleetError(code, `${source} is not valid JSON`);
  }
  const bad = findBadKey(text);
  if (bad?.tooDeep) {
    throw new FleetError(code, `${source} nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (bad) {
    throw new FleetError(
      code,
      `${source}: ${bad.duplicate ? 'duplicate key' : 'forbidden key'} ${JSON.stringify(bad.key)}`,
    );
  }
  return value;
}
