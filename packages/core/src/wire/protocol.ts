/**
 * The controller's wire protocol (contract §5): version, scopes, and the small value schemas every
 * request and response is built from. Everything here is plain data and zod schemas, so the
 * controller (server) and the operator's client validate the same shapes at the boundary.
 */
import { z } from 'zod';
import { isHomePath } from '../paths.js';

/**
 * The wire protocol version, served by `GET /v1/identity` as `protocol`. It changes when a
 * request or response shape changes incompatibly; the URL prefix (`/v1/`) changes with it.
 */
export const FLEET_PROTOCOL_VERSION = 1;

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
export const scopeSchema = z.enum(SCOPES);

/** True when `value` is one of {@link SCOPES}, spelled exactly. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** An operation id: a ULID in its canonical upper-case Crockford form (26 characters). */
export const operationIdSchema = z
  .string()
  .regex(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/, 'must be a ULID (26 upper-case Crockford characters)');

/** A lower-case hex sha256. */
export const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lower-case hex sha256');

/** A `~/`-relative node path (validated again, with the allowlist, on the node). */
export const homePathSchema = z
  .string()
  .max(1024)
  .refine(isHomePath, 'must be a ~/-relative path inside the node home');

/** An ISO-8601 UTC timestamp. */
export const timestampSchema = z.iso.datetime();

export const fileFormatSchema = z.enum(['yaml', 'json', 'markdown', 'text']);

/** JSON values (facts and parameters cross the wire as JSON). */
export const jsonValueSchema = z.json();
export const jsonObjectSchema = z.record(z.string(), jsonValueSchema);

/** Every error response: `{ error: { code, message } }`, plus the live sha for a failed precondition. */
export const errorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
    message: z.string(),
    /** `PRECONDITION_FAILED`: the live sha256 the node found (`null`: the file does not exist). */
    liveSha256: sha256Schema.nullable().optional(),
    /** The `~/` path the error is about, when there is one. */
    path: z.string().optional(),
  }),
});
export type WireErrorBody = z.infer<typeof errorBodySchema>;
