/**
 * The controller's wire protocol (contract §5): version, scopes, and the small value schemas every
 * request and response is built from. Everything here is plain data and zod schemas, so the
 * controller (server) and the operator's client validate the same shapes at the boundary.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { fileModeProblem } from '../file-mode.js';
import { isHomePath } from '../paths.js';

/**
 * The wire protocol version, served by `GET /v1/identity` as `protocol` and carried by every
 * request and answer in the {@link PROTOCOL_HEADER} header. It changes when a request or response
 * shape changes incompatibly. Version 2 (contract §5.1): requests carry action ids, never an argv
 * (`install.actions`; the `fleet.reload` parameter is gone), a snapshot names each file's domain,
 * and `versions` answers `refused` for a tool the node policy does not list.
 *
 * The URL prefix stays `/v1/`: the identity, health and runtime routes keep their paths and shapes
 * across versions (any client can read any node's identity and move its runtime), and every other
 * route refuses a client of another version by the header (`PROTOCOL_MISMATCH`, naming both).
 */
export const FLEET_PROTOCOL_VERSION = 2;

/**
 * The header naming the sender's protocol version, on every request and every answer. Protocol 1
 * had none: a request or answer without it is protocol 1.
 */
export const PROTOCOL_HEADER = 'fleet-protocol';

/** The response header a controller carries its durable audit head in (docs/audit-log.md). */
export const AUDIT_HEAD_HEADER = 'fleet-audit-head';

/** The protocol a request or answer speaks, from its header value: no header is protocol 1. */
export function protocolOfHeader(value: string | readonly string[] | undefined): number | null {
  if (value === undefined) return 1;
  const text = Array.isArray(value) ? value.join(',') : (value as string);
  return /^[1-9][0-9]{0,5}$/.test(text.trim()) ? Number(text.trim()) : null;
}

/** `protocol 1 (it sends no fleet-protocol header)`, for a message naming a peer's version. */
export function describeProtocol(value: string | readonly string[] | undefined): string {
  if (value === undefined) return `protocol 1 (it sends no ${PROTOCOL_HEADER} header)`;
  const version = protocolOfHeader(value);
  return version === null
    ? `an unreadable protocol (${PROTOCOL_HEADER}: ${JSON.stringify(value).slice(0, 40)})`
    : `protocol ${version}`;
}

/** The URL prefix of every route of this protocol version. */
export const WIRE_PREFIX = '/v1';

/** The token scopes of contract §5, exactly as they are spelled (case-sensitive, no whitespace). */
export const SCOPES = [
  'config:read',
  'config:install',
  'config:adopt',
  'versions:read',
  'runtime:upgrade',
  'node-admin:bootstrap',
  'node-admin:tokens',
] as const;
export type Scope = (typeof SCOPES)[number];
export const scopeSchema = z.lazy(() => z.enum(SCOPES));

/** True when `value` is one of {@link SCOPES}, spelled exactly. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** An operation id: a ULID in its canonical upper-case Crockford form (26 characters). */
export const operationIdSchema = z.lazy(() =>
  z
    .string()
    .regex(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/, 'must be a ULID (26 upper-case Crockford characters)'),
);

/** A lower-case hex sha256. */
export const sha256Schema = z.lazy(() =>
  z.string().regex(/^[0-9a-f]{64}$/, 'must be a lower-case hex sha256'),
);

/**
 * The fleet repository commit a write's content was rendered from (contract §1.8, §8.4): a full
 * git object id — sha-1 (40) or sha-256 (64) lower-case hex, as `git rev-parse HEAD` gives it.
 * Never free text and never an abbreviation (one can become ambiguous as the repository grows):
 * the receipt, the node's audit record and the operator's log must each name exactly one commit.
 */
export const commitIdSchema = z.lazy(() =>
  z
    .string()
    .regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/, 'must be a full git commit id (40 or 64 hex digits)'),
);

/** A `~/`-relative node path (validated again, with the allowlist, on the node). */
export const homePathSchema = z.lazy(() =>
  z.string().max(1024).refine(isHomePath, 'must be a ~/-relative path inside the node home'),
);

/** An ISO-8601 UTC timestamp. */
export const timestampSchema = z.lazy(() => z.iso.datetime());

/** A live file's permission bits as a node observed them (`"0644"`, `"1755"`): any mode at all. */
export const observedModeSchema = z.lazy(() =>
  z.string().regex(/^[0-7]{4}$/, 'must be 4 octal digits'),
);

/**
 * A managed file's mode on the wire (contract §10.4): always four octal digits (`"0600"`), and only
 * a mode fleet writes (`file-mode.ts`: no set-id or sticky bit, never group/other-writable).
 */
export const fileModeSchema = z.lazy(() =>
  z
    .string()
    .regex(/^[0-7]{4}$/, 'must be 4 octal digits ("0600")')
    .refine((text) => fileModeProblem(text) === null, {
      error: (issue) => `mode ${fileModeProblem(String(issue.input)) ?? 'is invalid'}`,
    }),
);

export const fileFormatSchema = z.lazy(() => z.enum(['yaml', 'json', 'markdown', 'text']));

/** A plain object: its prototype is Object's or none (a Date, a Map or a class instance is not). */
function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Whether `value` is a JSON value: a string, a finite number, a boolean, null, an array of JSON
 * values without holes, or a plain object whose own keys are all strings and whose values are JSON
 * values — what `z.json()` accepts, checked in one walk. `z.json()` tries each branch of its union
 * in turn and builds an issue for every branch that fails: on a drift over 1,000 hosts the facts
 * of every answer made it one of the costliest checks of the client (contract §14).
 */
export function isJsonValue(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i += 1) {
          if (!(i in value) || !isJsonValue(value[i])) return false;
        }
        return true;
      }
      return isJsonObject(value);
    }
    default:
      return false;
  }
}

/** Whether `value` is a plain object of JSON values (string keys only). */
export function isJsonObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  if (!isPlainObject(value)) return false;
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string' || !isJsonValue((value as Record<string, unknown>)[key])) {
      return false;
    }
  }
  return true;
}

/** JSON values (facts and parameters cross the wire as JSON). */
export const jsonValueSchema = z.lazy(() =>
  z.custom<z.core.util.JSONType>(isJsonValue, 'Invalid input: not a JSON value'),
);
export const jsonObjectSchema = z.lazy(() =>
  z.custom<Record<string, z.core.util.JSONType>>(
    isJsonObject,
    'Invalid input: not an object of JSON values',
  ),
);

/** The most characters of an error's `toolOutput` the operator's client accepts. */
const TOOL_OUTPUT_WIRE_CHARS = 8192;

/** Every error response: `{ error: { code, message } }`, plus the live sha for a failed precondition. */
export const errorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
    message: z.string(),
    /** `PRECONDITION_FAILED`: the live sha256 the node found (`null`: the file does not exist). */
    liveSha256: sha256Schema.nullable().optional(),
    /** The `~/` path the error is about, when there is one. */
    path: z.string().optional(),
    /**
     * `ACTION_FAILED`: the tail of what the refused action printed, redacted on the node (at most
     * 20 lines and 2 KiB, core `outputTail`; the bound here leaves room for redaction's names).
     * Only in the answer to an install that asked for it (its `toolOutput`, contract §5.2), and
     * only where the node policy returns the action's output.
     */
    toolOutput: z.string().max(TOOL_OUTPUT_WIRE_CHARS).optional(),
  }),
});
export type WireErrorBody = z.infer<typeof errorBodySchema>;
