/**
 * The node's token store, `~/.local/state/fleet/tokens.json` (0600, directory 0700): per-client
 * tokens with scopes, expiry, rotation with a grace period, and revocation. Only each token's
 * sha256 is stored. Rewrites are atomic and durable (temp + fsync + rename + directory fsync)
 * under a lock file, so a crash leaves the old set or the new one, never an empty one.
 *
 * A store that cannot be read or does not validate fails closed: `RECOVERY_REQUIRED`, which the
 * controller answers to every request — it never degrades to "no tokens, no auth". A store that
 * does not exist yet is an empty set (every request is refused as unauthenticated).
 */
import { constants } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from '@fleet/core/zod';
import {
  FleetError,
  fileStamp,
  isScope,
  parseStrictJson,
  scopeSchema,
  sha256Schema,
  timestampSchema,
  type Clock,
  type Scope,
} from '@fleet/core/node';
import { errnoOf } from '../fs/errors.js';
import { processAlive } from '../process-alive.js';
import { ensurePrivateDir, writeFileAtomic } from '../fs/durable.js';
import type { StatePaths } from '../state-paths.js';
import { cappedExpiry, mintedFrom, missingScopes } from './lineage.js';
import { mintToken, newTokenId, tokenHash } from './token.js';

const tokenId = z.string().regex(/^[0-9a-f]{16}$/);
export const clientNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, 'letters, digits, . _ @ - (at most 64)');

export const tokenRecordSchema = z.strictObject({
  id: tokenId,
  client: clientNameSchema,
  scopes: z.array(scopeSchema).min(1),
  createdAt: timestampSchema,
  expiresAt: timestampSchema,
  rotatedFrom: tokenId.optional(),
  /**
   * The token that minted this one through the controller (issue or rotate, lineage.ts); absent:
   * issued on the node — over SSH, by enrollment or `fleet token … --home` — by its operator.
   * Stores written before lineage have none and mean exactly that.
   */
  issuedBy: tokenId.optional(),
  /** Set on a rotated-out token: it stays valid until then. */
  graceUntil: timestampSchema.optional(),
  revokedAt: timestampSchema.optional(),
  /** sha256 of the token; the token itself is never stored. */
  sha256: sha256Schema,
});
export type TokenRecord = z.infer<typeof tokenRecordSchema>;

const storeSchema = z.strictObject({ version: z.literal(1), tokens: z.array(tokenRecordSchema) });

export type TokenState = 'active' | 'grace' | 'expired' | 'revoked';

export function tokenState(record: TokenRecord, now: Date): TokenState {
  if (record.revokedAt !== undefined) return 'revoked';
  const t = now.getTime();
  if (t >= Date.parse(record.expiresAt)) return 'expired';
  if (record.graceUntil !== undefined)
    return t < Date.parse(record.graceUntil) ? 'grace' : 'expired';
  return 'active';
}

export const DEFAULT_TTL_MS = 90 * 86_400_000;
export const DEFAULT_GRACE_MS = 10 * 60_000;

export interface IssuedToken {
  readonly record: TokenRecord;
  /** The token itself: shown once, never stored. */
  readonly token: string;
  /** The lifetime asked for ended past the minter's: it was cut to the minter's expiry. */
  readonly capped: boolean;
}

export interface RevokedTokens {
  readonly record: TokenRecord;
  /** Tokens minted from it (transitively) that this revoke revoked too, store order. */
  readonly minted: readonly TokenRecord[];
}

/**
 * The minting token, re-read under the store's lock: it must still be active (a token in its
 * rotation grace administers no tokens) and hold every scope it hands on.
 */
function minterOf(
  tokens: readonly TokenRecord[],
  id: string,
  scopes: readonly Scope[],
  now: Date,
): TokenRecord {
  const minter = tokens.find((record) => record.id === id);
  if (minter === undefined) throw new FleetError('AUTH_INVALID', 'the bearer token is not valid');
  const state = tokenState(minter, now);
  if (state === 'revoked') throw new FleetError('AUTH_REVOKED', `token ${id} has been revoked`);
  if (state === 'expired') throw new FleetError('AUTH_EXPIRED', `token ${id} has expired`);
  if (state === 'grace') throw graceDenied(minter);
  const missing = missingScopes(minter.scopes, scopes);
  if (missing.length > 0) {
    throw new FleetError(
      'SCOPE_DENIED',
      `token ${id} may not hand on ${missing.join(', ')}: a minted token never carries a scope its minter lacks`,
    );
  }
  return minter;
}

/** A rotated-out token keeps its scopes during its grace, but never token administration. */
export function graceDenied(record: TokenRecord): FleetError {
  return new FleetError(
    'SCOPE_DENIED',
    `token ${record.id} was rotated out and is only in its grace period (until ${record.graceUntil}): it may not administer tokens`,
  );
}

function recoveryRequired(why: string, cause?: unknown): FleetError {
  return new FleetError('RECOVERY_REQUIRED', `the token store ${why}; every request is refused`, {
    cause,
    suggestions: [
      'move ~/.local/state/fleet/tokens.json aside and issue new tokens with `fleet token issue` (or re-key through bootstrap)',
    ],
  });
}

export class TokenStore {
  private cache: { key: string; tokens: ReadonlyMap<string, TokenRecord> } | undefined;

  constructor(
    private readonly paths: StatePaths,
    private readonly clock: Clock,
  ) {}

  /**
   * The current tokens by id, re-read whenever the file changed (a `fleet token revoke` in
   * another process takes effect for every request that starts after it returned): its
   * {@link fileStamp}, taken on every request, says when.
   */
  async current(): Promise<ReadonlyMap<string, TokenRecord>> {
    let key: string | null;
    try {
      key = fileStamp(this.paths.tokens, { follow: true });
    } catch (error) {
      throw recoveryRequired(`cannot be read (${errnoOf(error) ?? 'error'})`, error);
    }
    if (key === null) return new Map();
    if (this.cache?.key === key) return this.cache.tokens;
    const tokens = new Map((await this.read()).map((record) => [record.id, record]));
    this.cache = { key, tokens };
    return tokens;
  }

  async list(): Promise<TokenRecord[]> {
    return this.read();
  }

  async issue(input: {
    client: string;
    scopes: readonly Scope[];
    ttlMs?: number;
    /** The token minting it through the controller; absent: the node's operator. */
    issuer?: string;
  }): Promise<IssuedToken> {
    const client = clientNameSchema.safeParse(input.client);
    if (!client.success) {
      throw new FleetError(
        'USAGE',
        `client name ${JSON.stringify(input.client)}: ${client.error.issues[0]?.message}`,
      );
    }
    if (input.scopes.length === 0)
      throw new FleetError('USAGE', 'a token needs at least one scope');
    const unknown = input.scopes.filter((scope) => !isScope(scope));
    if (unknown.length > 0) {
      throw new FleetError(
        'USAGE',
        `unknown scope ${unknown.map((s) => JSON.stringify(s)).join(', ')} (scopes are spelled exactly)`,
      );
    }
    const scopes = [...new Set(input.scopes)];
    return this.mutate((tokens) => {
      const minter =
        input.issuer === undefined
          ? undefined
          : minterOf(tokens, input.issuer, scopes, this.clock.now());
      const issued = this.mint(client.data, scopes, input.ttlMs ?? DEFAULT_TTL_MS, { minter });
      tokens.push(issued.record);
      return issued;
    });
  }

  /**
   * A new token for the same client and scopes; the old one stays valid for `graceMs`. With an
   * `issuer` (through the controller) the new token is that token's: it never outlives it, and
   * revoking the issuer revokes it (the issuer learned its secret).
   */
  async rotate(
    id: string,
    options: { graceMs?: number; ttlMs?: number; issuer?: string } = {},
  ): Promise<IssuedToken & { previous: TokenRecord }> {
    return this.mutate((tokens) => {
      const index = tokens.findIndex((record) => record.id === id);
      const old = tokens[index];
      if (old === undefined)
        throw new FleetError('USAGE', `no token with id ${JSON.stringify(id)}`);
      const now = this.clock.now();
      const state = tokenState(old, now);
      if (state !== 'active') {
        throw new FleetError('USAGE', `token ${id} is ${state}; issue a new one instead`);
      }
      const minter =
        options.issuer === undefined
          ? undefined
          : minterOf(tokens, options.issuer, old.scopes, now);
      const ttl = options.ttlMs ?? Date.parse(old.expiresAt) - Date.parse(old.createdAt);
      const issued = this.mint(old.client, old.scopes, ttl, { minter, rotatedFrom: old.id });
      const graceUntil = Math.min(
        now.getTime() + (options.graceMs ?? DEFAULT_GRACE_MS),
        Date.parse(old.expiresAt),
      );
      const previous = { ...old, graceUntil: new Date(graceUntil).toISOString() };
      tokens[index] = previous;
      tokens.push(issued.record);
      return { ...issued, previous };
    });
  }

  /** Revokes `id` and every token minted from it (see {@link revokeWithMinted}). */
  async revoke(id: string): Promise<TokenRecord> {
    return (await this.revokeWithMinted(id)).record;
  }

  /**
   * Revokes `id` and every token minted from it, transitively (lineage.ts): what a revoked
   * credential minted goes with it. Tokens already revoked are left as they were.
   */
  async revokeWithMinted(id: string): Promise<RevokedTokens> {
    return this.mutate((tokens) => {
      const index = tokens.findIndex((record) => record.id === id);
      const old = tokens[index];
      if (old === undefined)
        throw new FleetError('USAGE', `no token with id ${JSON.stringify(id)}`);
      const at = this.clock.now().toISOString();
      const minted: TokenRecord[] = [];
      for (const child of mintedFrom(tokens, id)) {
        if (child.revokedAt !== undefined) continue;
        const revoked = { ...child, revokedAt: at };
        tokens[tokens.indexOf(child)] = revoked;
        minted.push(revoked);
      }
      if (old.revokedAt !== undefined) return { record: old, minted };
      const revoked = { ...old, revokedAt: at };
      tokens[index] = revoked;
      return { record: revoked, minted };
    });
  }

  private mint(
    client: string,
    scopes: Scope[],
    ttlMs: number,
    from: { minter: TokenRecord | undefined; rotatedFrom?: string },
  ): IssuedToken {
    const id = newTokenId();
    const token = mintToken(id);
    const now = this.clock.now();
    const { expiresAt, capped } = cappedExpiry(now, ttlMs, from.minter);
    const record: TokenRecord = {
      id,
      client,
      scopes,
      createdAt: now.toISOString(),
      expiresAt,
      ...(from.rotatedFrom === undefined ? {} : { rotatedFrom: from.rotatedFrom }),
      ...(from.minter === undefined ? {} : { issuedBy: from.minter.id }),
      sha256: tokenHash(token).toString('hex'),
    };
    return { record, token, capped };
  }

  private async read(): Promise<TokenRecord[]> {
    let text: string;
    try {
      const handle = await open(
        this.paths.tokens,
        constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0),
      );
      try {
        const mode = (await handle.stat()).mode & 0o777;
        if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
          throw recoveryRequired(`is readable by others (mode ${mode.toString(8)}, must be 600)`);
        }
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return [];
      if (error instanceof FleetError) throw error;
      throw recoveryRequired(`cannot be read (${errnoOf(error) ?? 'error'})`, error);
    }
    let value: unknown;
    try {
      value = parseStrictJson(text, 'tokens.json', 'RECOVERY_REQUIRED');
    } catch (error) {
      throw recoveryRequired('is not valid JSON', error);
    }
    const parsed = storeSchema.safeParse(value);
    if (!parsed.success) throw recoveryRequired('does not have the expected shape');
    return parsed.data.tokens;
  }

  private async mutate<T>(change: (tokens: TokenRecord[]) => T): Promise<T> {
    await ensurePrivateDir(this.paths.home, this.paths.root);
    const release = await this.lock();
    try {
      const tokens = await this.read();
      const result = change(tokens);
      const text = `${JSON.stringify({ version: 1, tokens }, null, 2)}\n`;
      await writeFileAtomic(this.paths.tokens, text);
      return result;
    } finally {
      await release();
    }
  }

  /** A lock file holding the writer's pid; a lock left by a dead process is taken over. */
  private async lock(): Promise<() => Promise<void>> {
    const path = this.paths.tokensLock;
    for (let attempt = 0; attempt < 200; attempt += 1) {
      try {
        const handle = await open(path, 'wx', 0o600);
        await handle.writeFile(String(process.pid));
        await handle.close();
        return () => unlink(path).catch(() => undefined);
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
      }
      const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holder) && holder > 0 && !processAlive(holder)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      await sleep(25);
    }
    throw new FleetError('LOCKED', 'the token store is locked by another process');
  }
}
