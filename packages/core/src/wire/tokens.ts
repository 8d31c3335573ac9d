/**
 * Token administration from the operator seat (contract §5 "Tokens", §7 `fleet token … --host H`):
 * list, issue, rotate and revoke a node's per-client tokens through its controller, with the scope
 * `node-admin:tokens`. The node keeps deciding (contract §5.1): a token it issues or rotates through
 * the wire never carries a scope the caller's own token lacks, and it refuses to revoke the very
 * token a request is authenticated with unless the request says so (`self: true`). A new token
 * crosses the wire once, in the answer; it is never stored, logged or audited.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { operationIdSchema, scopeSchema, timestampSchema } from './protocol.js';

/** A token's id: its accessor, safe to show and log (`flt_<id>_…`). */
export const tokenIdSchema = z.lazy(() =>
  z.string().regex(/^[0-9a-f]{16}$/, 'must be a token id (16 hex digits)'),
);

/** Who a token is for. */
export const tokenClientSchema = z.lazy(() =>
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, 'letters, digits, . _ @ - (at most 64)'),
);

/** The longest lifetime a token issued or rotated through the wire may get. */
export const MAX_WIRE_TOKEN_TTL_MS = 366 * 86_400_000;
/** The longest grace period a rotated-out token may keep through the wire. */
export const MAX_WIRE_GRACE_MS = 7 * 86_400_000;

const ttlSchema = z.lazy(() => z.number().int().positive().max(MAX_WIRE_TOKEN_TTL_MS));

export const tokenStateSchema = z.lazy(() => z.enum(['active', 'grace', 'expired', 'revoked']));

/** A token as listed: never the token, never its hash. */
export const tokenSummarySchema = z.lazy(() =>
  z.strictObject({
    id: tokenIdSchema,
    client: tokenClientSchema,
    scopes: z.array(scopeSchema).min(1),
    state: tokenStateSchema,
    createdAt: timestampSchema,
    expiresAt: timestampSchema,
    rotatedFrom: tokenIdSchema.optional(),
    graceUntil: timestampSchema.optional(),
    revokedAt: timestampSchema.optional(),
  }),
);

export const tokenListResponseSchema = z.lazy(() =>
  z.strictObject({
    /** The id of the token the request was authenticated with. */
    self: tokenIdSchema,
    tokens: z.array(tokenSummarySchema),
  }),
);

/**
 * A token as listed with its lineage (`GET /v1/tokens/lineage`, added within protocol 2 as a new
 * route, so `GET /v1/tokens` keeps its shape): who minted it and that minter's own minters.
 */
export const tokenLineageSummarySchema = z.lazy(() =>
  z.strictObject({
    id: tokenIdSchema,
    client: tokenClientSchema,
    scopes: z.array(scopeSchema).min(1),
    state: tokenStateSchema,
    createdAt: timestampSchema,
    expiresAt: timestampSchema,
    rotatedFrom: tokenIdSchema.optional(),
    graceUntil: timestampSchema.optional(),
    revokedAt: timestampSchema.optional(),
    /**
     * The token that minted it through a controller; `null`: issued on the node (over SSH, by
     * enrollment or `fleet token … --home`) by its operator — also every token of a store written
     * before lineage was recorded.
     */
    issuedBy: tokenIdSchema.nullable(),
    /** The minters above it, nearest first; empty when issued on the node. */
    lineage: z.array(tokenIdSchema),
  }),
);

export const tokenLineageResponseSchema = z.lazy(() =>
  z.strictObject({
    /** The id of the token the request was authenticated with. */
    self: tokenIdSchema,
    tokens: z.array(tokenLineageSummarySchema),
  }),
);

export const tokenIssueRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    client: tokenClientSchema,
    scopes: z.array(scopeSchema).min(1).max(16),
    ttlMs: ttlSchema,
  }),
);

export const tokenRotateRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    id: tokenIdSchema,
    /** How long the old token stays valid (0: not at all; never past its own expiry). */
    graceMs: z.number().int().min(0).max(MAX_WIRE_GRACE_MS),
    /** The new token's lifetime; absent: the old one's. */
    ttlMs: ttlSchema.optional(),
  }),
);

export const tokenRevokeRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    id: tokenIdSchema,
    /**
     * The caller knows it revokes the token it is authenticated with, or a token it was minted
     * from (a lockout it asked for).
     */
    self: z.boolean(),
    /**
     * Name in the answer the tokens revoked with it (`minted`). Added within protocol 2: a node
     * that predates it refuses the key (`BAD_REQUEST`) and is asked again without it — it revokes
     * no minted tokens, as it records no minter.
     */
    reportMinted: z.literal(true).optional(),
  }),
);

/** A new token (issue, rotate): shown once. */
export const issuedTokenResponseSchema = z.lazy(() =>
  z.strictObject({
    id: tokenIdSchema,
    token: z.string().regex(/^flt_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/),
    client: tokenClientSchema,
    scopes: z.array(scopeSchema).min(1),
    expiresAt: timestampSchema,
    /** Rotate only: the old token's id and until when it is still accepted. */
    rotatedFrom: tokenIdSchema.optional(),
    graceUntil: timestampSchema.optional(),
  }),
);

export const revokedTokenResponseSchema = z.lazy(() =>
  z.strictObject({
    id: tokenIdSchema,
    client: tokenClientSchema,
    revokedAt: timestampSchema,
    /** True when it was the token this request was authenticated with. */
    self: z.boolean(),
    /**
     * The tokens minted from it (transitively) revoked with it; only when the request said
     * `reportMinted`, so an operator that predates the field never gets it.
     */
    minted: z.array(tokenIdSchema).optional(),
  }),
);

export type TokenSummary = z.infer<typeof tokenSummarySchema>;
export type TokenListResponse = z.infer<typeof tokenListResponseSchema>;
export type TokenLineageSummary = z.infer<typeof tokenLineageSummarySchema>;
export type TokenLineageResponse = z.infer<typeof tokenLineageResponseSchema>;
export type TokenIssueRequest = z.infer<typeof tokenIssueRequestSchema>;
export type TokenRotateRequest = z.infer<typeof tokenRotateRequestSchema>;
export type TokenRevokeRequest = z.infer<typeof tokenRevokeRequestSchema>;
export type IssuedTokenResponse = z.infer<typeof issuedTokenResponseSchema>;
export type RevokedTokenResponse = z.infer<typeof revokedTokenResponseSchema>;

/** The id of a per-client token (`flt_<id>_<secret>`), else `undefined`. */
export function tokenAccessor(token: string): string | undefined {
  return /^flt_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/.exec(token)?.[1];
}
