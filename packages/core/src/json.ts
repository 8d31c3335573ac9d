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

/**
 * Finds the first duplicated or forbidden key in `text`, which must already be valid JSON, or
 * nesting deeper than {@link MAX_JSON_DEPTH}. A single pass over the text with a stack of the keys
 * seen in each open object.
 */
export function findBadKey(text: string): BadKey | undefined {
  const stack: (Set<string> | null)[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const raw = text.slice(i, j + 1);
      i = j + 1;
      while (i < text.length && /\s/.test(text[i] as string)) i += 1;
      const keys = stack[stack.length - 1];
      if (text[i] === ':' && keys) {
        const key = JSON.parse(raw) as string;
        if (FORBIDDEN_KEYS.has(key)) return { key, duplicate: false };
        if (keys.has(key)) return { key, duplicate: true };
        keys.add(key);
      }
      continue;
    }
    if (ch === '{' || ch === '[') {
      if (stack.length >= MAX_JSON_DEPTH) return { tooDeep: true };
      stack.push(ch === '{' ? new Set() : null);
    } else if (ch === '}' || ch === ']') stack.pop();
    i += 1;
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
