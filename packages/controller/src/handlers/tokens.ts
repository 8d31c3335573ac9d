/**
 * Token administration through the controller (core's wire/tokens.ts; contract §5 "Tokens"): the
 * operator rotates, revokes, lists and issues a node's tokens from the operator seat with
 * `node-admin:tokens`, against the same store as the node-local `fleet token --home`.
 *
 * The node decides:
 * - no escalation: a token issued or rotated through the wire never has a scope the caller's own
 *   token lacks (rotating someone else's token hands its new secret to the caller, so the same
 *   rule holds there) — `SCOPE_DENIED`, nothing changed;
 * - no silent lockout: revoking the token the request is authenticated with is refused
 *   (`PRECONDITION_FAILED`, exit 3) unless the request says `self: true`;
 * - rotating a token that is not active (in grace, expired, revoked) is `PRECONDITION_FAILED`; an
 *   unknown id `TOKEN_NOT_FOUND`.
 * Every mutation claims its operation id first (tokens/operations.ts) and is audited by the
 * pipeline (route audit `always`); the new token is in the answer only — never in the audit log.
 */
import {
  FleetError,
  type IssuedTokenResponse,
  type RevokedTokenResponse,
  type Scope,
  type TokenIssueRequest,
  type TokenListResponse,
  type TokenRevokeRequest,
  type TokenRotateRequest,
} from '@fleet/core/node';
import type { Principal } from '../tokens/auth.js';
import { claimTokenOperation } from '../tokens/operations.js';
import { tokenState, type TokenRecord } from '../tokens/store.js';
import type { ControllerRuntime } from '../runtime.js';
import type { Handler } from './types.js';

type TokenPrincipal = Extract<Principal, { kind: 'token' }>;

/** The route table keeps the legacy token out; this narrows the type for the handlers. */
function caller(principal: Principal): TokenPrincipal {
  if (principal.kind !== 'token') {
    throw new FleetError('SCOPE_DENIED', 'token administration needs a per-client token');
  }
  return principal;
}

function requireScopesHeld(who: TokenPrincipal, scopes: readonly Scope[], what: string): void {
  const missing = scopes.filter((scope) => !who.scopes.includes(scope));
  if (missing.length > 0) {
    throw new FleetError(
      'SCOPE_DENIED',
      `token ${who.id} may not ${what}: it would carry ${missing.join(', ')}, which the calling token lacks (a token administered through the controller never gains a scope its caller does not hold)`,
    );
  }
}

async function find(runtime: ControllerRuntime, id: string): Promise<TokenRecord> {
  const record = (await runtime.tokens.list()).find((entry) => entry.id === id);
  if (record === undefined) {
    throw new FleetError('TOKEN_NOT_FOUND', `no token with id ${id} on this node`);
  }
  return record;
}

export const tokenList: Handler = async ({ runtime, principal }) => {
  const who = caller(principal);
  const now = runtime.clock.now();
  const body: TokenListResponse = {
    self: who.id,
    tokens: (await runtime.tokens.list()).map((record) => {
      const { sha256, ...shown } = record;
      void sha256; // the hash never leaves the node
      return { ...shown, state: tokenState(record, now) };
    }),
  };
  return { status: 200, body };
};

export const tokenIssue: Handler = async ({ runtime, principal, body }) => {
  const request = body as TokenIssueRequest;
  const who = caller(principal);
  requireScopesHeld(who, request.scopes, `issue a token for ${request.client}`);
  await claimTokenOperation(runtime, request.operationId);
  const { record, token } = await runtime.tokens.issue({
    client: request.client,
    scopes: request.scopes,
    ttlMs: request.ttlMs,
  });
  const answer: IssuedTokenResponse = {
    id: record.id,
    token,
    client: record.client,
    scopes: record.scopes,
    expiresAt: record.expiresAt,
  };
  return { status: 200, body: answer };
};

export const tokenRotate: Handler = async ({ runtime, principal, body }) => {
  const request = body as TokenRotateRequest;
  const who = caller(principal);
  const old = await find(runtime, request.id);
  requireScopesHeld(who, old.scopes, `rotate token ${old.id} (${old.client})`);
  const state = tokenState(old, runtime.clock.now());
  if (state !== 'active') {
    throw new FleetError(
      'PRECONDITION_FAILED',
      `token ${old.id} is ${state}: only an active token is rotated; issue a new one instead`,
    );
  }
  await claimTokenOperation(runtime, request.operationId);
  const { record, token, previous } = await runtime.tokens.rotate(request.id, {
    graceMs: request.graceMs,
    ...(request.ttlMs === undefined ? {} : { ttlMs: request.ttlMs }),
  });
  const answer: IssuedTokenResponse = {
    id: record.id,
    token,
    client: record.client,
    scopes: record.scopes,
    expiresAt: record.expiresAt,
    rotatedFrom: previous.id,
    graceUntil: previous.graceUntil,
  };
  return { status: 200, body: answer };
};

export const tokenRevoke: Handler = async ({ runtime, principal, body }) => {
  const request = body as TokenRevokeRequest;
  const who = caller(principal);
  const target = await find(runtime, request.id);
  const self = target.id === who.id;
  if (self && !request.self) {
    throw new FleetError(
      'PRECONDITION_FAILED',
      `token ${target.id} is the one this request is authenticated with: revoking it locks ${who.client} out of this node; rotate it instead, or say so (self)`,
    );
  }
  await claimTokenOperation(runtime, request.operationId);
  const revoked = await runtime.tokens.revoke(request.id);
  const answer: RevokedTokenResponse = {
    id: revoked.id,
    client: revoked.client,
    revokedAt: revoked.revokedAt as string,
    self,
  };
  return { status: 200, body: answer };
};
