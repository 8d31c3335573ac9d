/**
 * Reading untrusted requests: the Host check, bounded bodies (413 as soon as the declared length
 * or the streamed count passes the cap, then the connection is closed), strict UTF-8 and strict
 * JSON (duplicate keys and `__proto__` refused), and zod validation.
 */
import type { IncomingMessage } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import type * as z from '@fleet/core/zod';
import { FleetError, parseStrictJson } from '@fleet/core/node';
import { WireRefusal } from './respond.js';

/** A refusal whose connection is closed after the answer: the body's rest is never read. */
function closing(code: 'REQUEST_TOO_LARGE' | 'BAD_REQUEST', message: string): WireRefusal {
  return new WireRefusal(code, message, { close: true });
}

/** `REQUEST_TOO_LARGE` from the declared length alone, before reading anything. */
export function checkDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > limit)) {
    throw closing('REQUEST_TOO_LARGE', `request body over the ${limit}-byte bound`);
  }
}

/** True when the request says it has a body. */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Reads the body, counting bytes as they come; `REQUEST_TOO_LARGE` past `limit`. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    const fail = (error: WireRefusal): void => {
      if (done) return;
      done = true;
      req.pause();
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      total += chunk.length;
      if (total > limit) {
        fail(closing('REQUEST_TOO_LARGE', `request body over the ${limit}-byte bound`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks, total));
    });
    req.on('error', () => fail(closing('BAD_REQUEST', 'the request body could not be read')));
    req.on('aborted', () => fail(closing('BAD_REQUEST', 'the request was aborted')));
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Body texts that passed their schema, per schema, the oldest forgotten first (contract §14: a
 * fleet-wide drift sends every node the same snapshot body, run after run, and a virtual lab's
 * thousand nodes share one process). Such a text is parsed again with plain `JSON.parse`, with no
 * second strict check and schema: the same text parses to the same value, which passed both —
 * duplicate and prototype keys are in the text, and the schema's checks are functions of the value
 * alone. A text is kept only when the schema's output deep-equals its input (no default or
 * transform made the value the handler gets differ from the parse), and only up to
 * {@link PASSED_BODY_BYTES}; a text that failed is never kept, so it is checked, and refused, again.
 */
const passedBodies = new WeakMap<z.ZodType, Set<string>>();
const PASSED_BODIES = 64;
// Small bodies only: what repeats is a read's (a snapshot names its files, a few hundred bytes);
// an install's body carries its files and a fresh operation id, never repeats, and would only
// hold memory a long-lived controller keeps (contract §14's idle RSS).
const PASSED_BODY_BYTES = 8 * 1024;

/** Strict JSON from a body: UTF-8, no duplicate or prototype keys, then the schema. */
export function decodeJson<T extends z.ZodType>(bytes: Buffer, schema: T): z.infer<T> {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new FleetError('BAD_REQUEST', 'the request body is not valid UTF-8');
  }
  let passed = passedBodies.get(schema);
  if (passed?.has(text)) return JSON.parse(text) as z.infer<T>;
  const value = parseStrictJson(text, 'the request body', 'BAD_REQUEST');
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map(
        (issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(body)'}: ${issue.message}`,
      );
    throw new FleetError(
      'BAD_REQUEST',
      `the request body does not match the schema: ${issues.join('; ')}`,
    );
  }
  if (text.length <= PASSED_BODY_BYTES && isDeepStrictEqual(parsed.data, value)) {
    if (passed === undefined) passedBodies.set(schema, (passed = new Set()));
    if (passed.size >= PASSED_BODIES) passed.delete(passed.values().next().value as string);
    passed.add(text);
  }
  return parsed.data;
}

/** Whether a `Host` header names this controller. */
export function hostAllowed(
  host: string | undefined,
  allowed: ReadonlySet<string> | 'any',
): boolean {
  if (host === undefined || host === '') return false;
  return allowed === 'any' || allowed.has(host.toLowerCase());
}
