/**
 * Token administration through the controller (core's wire/tokens.ts; contract §5 "Tokens"): the
 * operator rotates, revokes, lists and issues a node's tokens from the operator seat with
 * `node-admin:tokens`, against the same store as the node-local `fleet token --home`.
 *
 * The node decides (tokens/lineage.ts):
 * - only an active token administers tokens: one in its rotation grace keeps its other scopes
 *   until the grace ends, never this one (`SCOPE_DENIED`);
 * - a caller administers only tokens whose scopes are a subset of its own — issuing, rotating
 *   (which hands the new secret to the caller) and revoking alike — `SCOPE_DENIED`, nothing changed;
 * - a token minted here (issued or rotated) is the caller's: it records the caller as its issuer,
 *   ends no later than the caller, and is revoked with it;
 * - no silent lockout: revoking the token the request is authenticated with, or one it was minted
 *   from, is refused (`PRECONDITION_FAILED`, exit 3) unless the request says `self: true`;
 * - rotating a token that is not active (in grace, expired, revoked) is `PRECONDITION_FAILED`; an
 *   unknown id `TOKEN_NOT_FOUND`.
 * Every mutation claims its operation id first (tokens/operations.ts) and is audited by the
 * pipeline (route audit `always`), the record naming the token, client, scopes and lifetime
 * affected; the new token is in the answer only — never in the audit log.
 */
import {
  FleetError,
  type IssuedTokenResponse,
  type RevokedTokenResponse,
  type Scope,
  type TokenIssueRequest,
  type TokenLineageResponse,
  type TokenListResponse,
  type TokenRevokeRequest,
  type TokenRotateRequest,
} from '@fleet/core/node';
import type { Principal } from '../tokens/auth.js';
import { lineageOf, mintedFrom, missingScopes } from '../tokens/lineage.js';
import { claimTokenOperation } from '../tokens/operations.js';
import { graceDenied, tokenState, type TokenRecord } from '../tokens/store.js';
import type { ControllerRuntime } from '../runtime.js';
import type { Handler } from './types.js';

/**
 * The calling token, as the store has it now. The route table keeps the legacy token out; a token
 * in its rotation grace is refused here (finding: a stolen token in grace rotated its owner's new
 * token away).
 */
async function caller(runtime: ControllerRuntime, principal: Principal): Promise<TokenRecord> {
  if (principal.kind !== 'token') {
    throw new FleetError('SCOPE_DENIED', 'token administration needs a per-client token');
  }
  const record = await find(runtime, principal.id);
  if (tokenState(record, runtime.clock.now()) === 'grace') throw graceDenied(record);
  return record;
}

function requireScopesHeld(who: TokenRecord, scopes: readonly Scope[], what: string): void {
  const missing = missingScopes(who.scopes, scopes);
  if (missing.length > 0) {
    throw new FleetError(
      'SCOPE_DENIED',
      `token ${who.id} may not ${what}: it carries ${missing.join(', ')}, which the calling token lacks (a caller administers only tokens whose scopes are a subset of its own)`,
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

/** What a token record tells the audit log: never its secret or hash. */
function described(record: TokenRecord): string {
  return `token ${record.id} for ${record.client} [${record.scopes.join(',')}] expires ${record.expiresAt}`;
}

export const tokenList: Handler = async ({ runtime, principal }) => {
  const who = await caller(runtime, principal);
  const now = runtime.clock.now();
  const body: TokenListResponse = {
    self: who.id,
    // The list's answer keeps the shape it had before lineage (contract §5.2): no issuer here.
    tokens: (await runtime.tokens.list()).map(({ sha256, issuedBy, ...shown }) => {
      void sha256; // the hash never leaves the node
      void issuedBy; // GET /v1/tokens/lineage names it
      return { ...shown, state: tokenState(shown as TokenRecord, now) };
    }),
  };
  return { status: 200, body };
};

export const tokenLineage: Handler = async ({ runtime, principal }) => {
  const who = await caller(runtime, principal);
  const now = runtime.clock.now();
  const records = await runtime.tokens.list();
  const body: TokenLineageResponse = {
    self: who.id,
    tokens: records.map(({ sha256, issuedBy, ...shown }) => {
      void sha256; // the hash never leaves the node
      return {
        ...shown,
        state: tokenState(shown as TokenRecord, now),
        issuedBy: issuedBy ?? null,
        lineage: lineageOf(records, shown.id),
      };
    }),
  };
  return { status: 200, body };
};

export const tokenIssue: Handler = async ({ runtime, principal, body }) => {
  const request = body as TokenIssueRequest;
  const who = await caller(runtime, principal);
  requireScopesHeld(who, request.scopes, `issue a token for ${request.client}`);
  await claimTokenOperation(runtime, request.operationId);
  const { record, token, capped } = await runtime.tokens.issue({
    client: request.client,
    scopes: request.scopes,
    ttlMs: request.ttlMs,
    issuer: who.id,
  });
  const answer: IssuedTokenResponse = {
    id: record.id,
    token,
    client: record.client,
    scopes: record.scopes,
    expiresAt: record.expiresAt,
  };
  const cap = capped ? ` (capped at issuer ${who.id}'s expiry)` : '';
  return {
    status: 200,
    body: answer,
    auditDetail: `issued ${described(record)}${cap}, issuer ${who.id}`,
    undo: () => runtime.tokens.revoke(record.id).then(() => undefined),
  };
};

export const tokenRotate: Handler = async ({ runtime, principal, body }) => {
  const request = body as TokenRotateRequest;
  const who = await caller(runtime, principal);
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
  const { record, token, previous, capped } = await runtime.tokens.rotate(request.id, {
    graceMs: request.graceMs,
    issuer: who.id,
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
  const cap = capped ? ` (capped at issuer ${who.id}'s expiry)` : '';
  return {
    status: 200,
    body: answer,
    auditDetail: `rotated token ${previous.id} (grace until ${previous.graceUntil}) into ${described(record)}${cap}, issuer ${who.id}`,
  };
};

export const tokenRevoke: Handler = async ({ runtime, principal, body }) => {
  const request = body as TokenRevokeRequest;
  const who = await caller(runtime, principal);
  const target = await find(runtime, request.id);
  requireScopesHeld(who, target.scopes, `revoke token ${target.id} (${target.client})`);
  const self = target.id === who.id;
  const ancestor = mintedFrom(await runtime.tokens.list(), target.id).some((t) => t.id === who.id);
  if ((self || ancestor) && !request.self) {
    const why = self
      ? 'is the one this request is authenticated with'
      : `minted (directly or not) the token ${who.id} this request is authenticated with, which would be revoked with it`;
    throw new FleetError(
      'PRECONDITION_FAILED',
      `token ${target.id} ${why}: revoking it locks ${who.client} out of this node; rotate it instead, or say so (self)`,
    );
  }
  await claimTokenOperation(runtime, request.operationId);
  const { record, minted } = await runtime.tokens.revokeWithMinted(request.id);
  const answer: RevokedTokenResponse = {
    id: record.id,
    client: record.client,
    revokedAt: record.revokedAt as string,
    self: self || ancestor,
    ...(request.reportMinted === true ? { minted: minted.map((m) => m.id) } : {}),
  };
  const with_ =
    minted.length === 0
      ? 'nothing minted from it'
      : `${minted.length} token(s) minted from it: ${minted.map((m) => `${m.id} (${m.client})`).join(', ')}`;
  return {
    status: 200,
    body: answer,
    auditDetail: `revoked ${described(record)}, and ${with_}`,
  };
};
