/**
 * Token lineage (contract §5 "Tokens", catalogue §2 "token lineage"): which token minted which,
 * decided as data. A token issued or rotated through the controller records its minter
 * (`issuedBy`); one issued on the node — over SSH, by enrollment or `fleet token … --home` — has
 * none: its issuer is the node's operator. From that follow the rules the store and the handlers
 * enforce:
 * - a minted token never outlives its minter ({@link cappedExpiry}) and never carries a scope the
 *   minter lacks ({@link missingScopes});
 * - revoking a token revokes everything minted from it, transitively ({@link mintedFrom}), so a
 *   short-lived credential cannot leave a long-lived one behind.
 * Pure; the store applies it under its lock.
 */
import type { Scope } from '@fleet/core/node';

/** The fields lineage needs of a stored token. */
export interface LineageRecord {
  readonly id: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt: string;
  readonly issuedBy?: string;
}

/** The scopes of `wanted` that `holder` lacks (empty: `wanted` is a subset). */
export function missingScopes(holder: readonly Scope[], wanted: readonly Scope[]): Scope[] {
  return wanted.filter((scope) => !holder.includes(scope));
}

/** The expiry of a token minted at `now` for `ttlMs`, never past its minter's. */
export function cappedExpiry(
  now: Date,
  ttlMs: number,
  minter: LineageRecord | undefined,
): { expiresAt: string; capped: boolean } {
  const wanted = now.getTime() + ttlMs;
  const limit = minter === undefined ? Infinity : Date.parse(minter.expiresAt);
  const at = Math.min(wanted, limit);
  return { expiresAt: new Date(at).toISOString(), capped: at < wanted };
}

/**
 * Every token minted from `id`, directly or through tokens it minted, in store order. A cycle
 * (which only an edited store can hold) ends the walk instead of looping.
 */
export function mintedFrom<T extends LineageRecord>(tokens: readonly T[], id: string): T[] {
  const found = new Set<string>([id]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const token of tokens) {
      if (token.issuedBy !== undefined && found.has(token.issuedBy) && !found.has(token.id)) {
        found.add(token.id);
        grew = true;
      }
    }
  }
  return tokens.filter((token) => token.id !== id && found.has(token.id));
}

/**
 * The chain of minters of `id`, nearest first, ending where a token was issued on the node (or
 * where a minter is no longer in the store). Empty: issued on the node.
 */
export function lineageOf(tokens: readonly LineageRecord[], id: string): string[] {
  const byId = new Map(tokens.map((token) => [token.id, token]));
  const chain: string[] = [];
  let next = byId.get(id)?.issuedBy;
  while (next !== undefined && !chain.includes(next) && next !== id) {
    chain.push(next);
    next = byId.get(next)?.issuedBy;
  }
  return chain;
}
