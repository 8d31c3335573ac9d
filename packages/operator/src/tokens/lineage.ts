/**
 * `fleet token list|revoke --host H` with token lineage (contract §5 "Tokens"): the list names
 * each token's issuer and the minters above it; a revoke names the tokens minted from the revoked
 * one that went with it. Both are additions within protocol 2, so a node that predates them is
 * still served: the list falls back to `GET /v1/tokens` (issuer unknown, and said so), the revoke
 * is sent again without `reportMinted` (such a node records no minter, so it revokes nothing
 * more).
 */
import {
  isFleetError,
  type ControllerClient,
  type RevokedTokenResponse,
  type TokenSummary,
} from '@fleet/core';

/** A listed token: with its issuer when the node records lineage. */
export type ListedToken = TokenSummary & {
  /** `null`: issued on the node (SSH, enrollment, `--home`); `undefined`: the node predates lineage. */
  readonly issuedBy?: string | null;
  readonly lineage?: readonly string[];
};

export interface TokenListing {
  readonly self: string;
  readonly tokens: readonly ListedToken[];
  /** False when the node predates lineage: no issuer is known. */
  readonly lineage: boolean;
}

export async function listWithLineage(
  client: Pick<ControllerClient, 'tokenLineage' | 'tokenList'>,
): Promise<TokenListing> {
  try {
    const answer = await client.tokenLineage();
    return { self: answer.self, tokens: answer.tokens, lineage: true };
  } catch (error) {
    if (!isFleetError(error) || error.code !== 'OP_UNKNOWN') throw error;
  }
  const answer = await client.tokenList();
  return { self: answer.self, tokens: answer.tokens, lineage: false };
}

/** Whether a node refused a revoke only because it predates `reportMinted`. */
function refusedReportKey(error: unknown): boolean {
  return (
    isFleetError(error) &&
    error.code === 'BAD_REQUEST' &&
    /\breportMinted\b/.test(error.message) &&
    /unrecognized key/i.test(error.message)
  );
}

export async function revokeWithMinted(
  client: Pick<ControllerClient, 'tokenRevoke'>,
  request: { readonly operationId: string; readonly id: string; readonly self: boolean },
): Promise<RevokedTokenResponse> {
  try {
    return await client.tokenRevoke({ ...request, reportMinted: true });
  } catch (error) {
    // Refused by the body's schema, before the node claimed the operation id: it is still free.
    if (!refusedReportKey(error)) throw error;
  }
  return client.tokenRevoke(request);
}

/** What a list's issuer and lineage cells are made from. */
type LineageCells = Pick<ListedToken, 'issuedBy' | 'lineage'>;

/** How a list shows who issued a token. */
export function issuerText(token: LineageCells, self: string | undefined): string {
  if (token.issuedBy === undefined) return 'unknown (node predates lineage)';
  if (token.issuedBy === null) return 'node (SSH/operator)';
  return token.issuedBy === self ? `${token.issuedBy} (this token)` : token.issuedBy;
}

/** The chain of minters as one cell: nearest first, down to the node's operator. */
export function lineageText(token: LineageCells): string {
  if (token.lineage === undefined) return '-';
  return [...token.lineage, 'node'].join(' ← ');
}

/** The tokens a revoke took along, as the answer and the operator log name them. */
export function mintedText(ids: readonly string[]): string {
  return ids.length === 0
    ? 'no token minted from it'
    : `${ids.length} token(s) minted from it: ${ids.join(', ')}`;
}
