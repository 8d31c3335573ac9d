/**
 * Authentication and authorisation of one request. Unknown and malformed tokens get the same
 * answer (`AUTH_INVALID`, same message), and an unknown id still costs one constant-time
 * comparison, so validity is not an oracle. Scopes are compared exactly (`Config:Install` is not
 * `config:install`).
 */
import { readFile } from 'node:fs/promises';
import { FleetError, type RouteSpec, type Scope } from '@fleet/core/node';
import { tokenState, type TokenRecord } from './store.js';
import { hashesEqual, tokenHash, tokenIdOf } from './token.js';

export type Principal =
  | {
      readonly kind: 'token';
      readonly id: string;
      readonly client: string;
      readonly scopes: readonly Scope[];
    }
  | { readonly kind: 'legacy'; readonly id: 'legacy' };

const MAX_HEADER = 4096;
const DUMMY = tokenHash('fleet: no such token');
const INVALID = 'the bearer token is not valid';

export function authenticate(
  header: string | undefined,
  tokens: ReadonlyMap<string, TokenRecord>,
  legacy: Buffer | null,
  now: Date,
): Principal {
  if (header === undefined || header === '') {
    throw new FleetError('AUTH_REQUIRED', 'an Authorization: Bearer <token> header is required');
  }
  const match = header.length <= MAX_HEADER ? /^Bearer ([\x21-\x7e]+)$/.exec(header) : null;
  if (!match) throw new FleetError('AUTH_INVALID', INVALID);
  const token = match[1] as string;
  const presented = tokenHash(token);
  const id = tokenIdOf(token);
  if (id !== undefined) {
    const record = tokens.get(id);
    const stored = record ? Buffer.from(record.sha256, 'hex') : DUMMY;
    if (!hashesEqual(presented, stored) || !record) throw new FleetError('AUTH_INVALID', INVALID);
    const state = tokenState(record, now);
    if (state === 'revoked') throw new FleetError('AUTH_REVOKED', `token ${id} has been revoked`);
    if (state === 'expired') throw new FleetError('AUTH_EXPIRED', `token ${id} has expired`);
    return { kind: 'token', id, client: record.client, scopes: record.scopes };
  }
  if (legacy !== null && hashesEqual(presented, legacy)) return { kind: 'legacy', id: 'legacy' };
  hashesEqual(presented, DUMMY);
  throw new FleetError('AUTH_INVALID', INVALID);
}

/** `SCOPE_DENIED` unless the principal may call the route (and, if given, needs `extra` too). */
export function authorize(principal: Principal, route: RouteSpec, extra?: Scope): void {
  if (principal.kind === 'legacy') {
    if (route.legacy && (extra === undefined || extra !== 'node-admin:bootstrap')) return;
    throw new FleetError(
      'SCOPE_DENIED',
      `the legacy shared token may not call ${route.operation}: it needs a per-client token`,
    );
  }
  const has = route.scopes.some((scope) => principal.scopes.includes(scope));
  if (has && (extra === undefined || principal.scopes.includes(extra))) return;
  const needed = extra !== undefined && has ? [extra] : route.scopes;
  throw new FleetError(
    'SCOPE_DENIED',
    `token ${principal.id} lacks the scope for ${route.operation} (needs ${needed.join(' or ')})`,
  );
}

/**
 * The legacy shared token's sha256 from its config file: `sha256:<hex>` or `<hex>` on one line.
 * The token itself is never configured on the node.
 */
export async function readLegacyTokenHash(file: string): Promise<Buffer> {
  const text = (await readFile(file, 'utf8')).trim();
  const match = /^(?:sha256:)?([0-9a-f]{64})$/i.exec(text);
  if (!match) {
    throw new FleetError('USAGE', `${file}: expected the legacy token's sha256 as 64 hex digits`);
  }
  return Buffer.from((match[1] as string).toLowerCase(), 'hex');
}
