/**
 * `fleet token issue|list|rotate|revoke`'s service: a node's per-client tokens (contract §5
 * "Tokens", §7), on the node's own token store (`home`) or from the operator seat through a host's
 * controller (`node-admin:tokens`, tokens/remote.ts), with token lineage (tokens/lineage.ts).
 * Needs no plugin: nothing is injected.
 */
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { FleetError, isScope, newOperationId, type Scope } from '@fleet/core';
import { injectable } from '@fleet/core/di';
import type { TokenStore } from '@fleet/controller';
import { listWithLineage, mintedText, revokeWithMinted } from '../tokens/lineage.js';
import {
  checkRevoke,
  recordTokenVerb,
  remoteTokens,
  rotateRemote,
  type RemoteTokens,
} from '../tokens/remote.js';

export { issuerText, lineageText, mintedText } from '../tokens/lineage.js';

/** Where a token verb works: the node's own token store, or a host of fleet.yaml. */
export type TokenTarget = TokenStoreTarget | TokenHostTarget;

export interface TokenStoreTarget {
  /** The node's home whose token store to use (default: the user's home directory). */
  readonly home?: string;
  readonly host?: undefined;
}

export interface TokenHostTarget {
  /** Through this host's controller, with the credentials file's token for it. */
  readonly host: string;
  /** The fleet repository naming the host. */
  readonly root: string;
  /** Per request. */
  readonly timeoutMs: number;
}

/** A token as issued: the secret is shown once. */
export interface IssuedToken {
  readonly id: string;
  readonly token: string;
  readonly client: string;
  readonly scopes: readonly string[];
  readonly expiresAt: string;
}

export interface TokenIssueOptions {
  readonly target: TokenTarget;
  readonly client: string;
  readonly scopes: readonly Scope[];
  readonly ttlMs: number;
}

export interface TokenIssueOutcome {
  readonly issued: IssuedToken;
  /**
   * Through a controller: the node cut its lifetime to the expiry of the operator's token for the
   * host (a token minted through a controller never outlives the token that minted it).
   */
  readonly lifetimeCut: boolean;
}

export interface ListedTokens {
  readonly tokens: readonly {
    readonly id: string;
    readonly client: string;
    readonly scopes: readonly string[];
    readonly state: string;
    readonly createdAt: string;
    readonly expiresAt: string;
    readonly rotatedFrom?: string;
    readonly graceUntil?: string;
    readonly revokedAt?: string;
    /**
     * The token that minted it through a controller; `null`: issued on the node (over SSH, by
     * enrollment or --home) by its operator; absent: the node predates lineage.
     */
    readonly issuedBy?: string | null;
    /** The minters above it, nearest first (absent: the node predates lineage). */
    readonly lineage?: readonly string[];
  }[];
  /** Through a controller: the id of the token the request was made with (the operator's own). */
  readonly self?: string;
}

export interface TokenListOutcome {
  readonly listed: ListedTokens;
  /** False when the host predates token lineage: no issuer is known. */
  readonly lineage: boolean;
}

export interface TokenRotateOptions {
  readonly target: TokenTarget;
  /** The token to rotate (through a controller: default, the operator's own token for the host). */
  readonly id?: string;
  /** How long the old token stays valid. */
  readonly graceMs: number;
  /** The new token's lifetime (default: the old one's). */
  readonly ttlMs?: number;
  /** A line for stderr (the new token, when the credentials file could not be replaced). */
  readonly onNote?: (line: string) => void;
}

export interface RotatedToken extends IssuedToken {
  readonly rotatedFrom: string;
  /** Until when the old token is still accepted. */
  readonly graceUntil: string;
  /** Through a controller: whether the credentials file now holds the new token (it was the operator's own). */
  readonly credentialsUpdated?: boolean;
}

export interface TokenRotateOutcome {
  readonly rotated: RotatedToken;
  /** Through a controller: the credentials file the operator's token for the host is in. */
  readonly credentialsPath?: string;
}

export interface TokenRevokeOptions {
  readonly target: TokenTarget;
  readonly id: string;
  /** Through a controller: revoke it even though it is the operator's own token for the host. */
  readonly self: boolean;
}

export interface RevokedToken {
  readonly id: string;
  readonly client: string;
  readonly revokedAt: string;
  /** Through a controller: it was the operator's own token for the host (revoked with `self`). */
  readonly self?: boolean;
  /** The tokens minted from it (transitively) revoked with it (absent: the node predates lineage). */
  readonly minted?: readonly string[];
}

export interface TokenRevokeOutcome {
  readonly revoked: RevokedToken;
  /** Through a controller: the credentials file the operator's token for the host is in. */
  readonly credentialsPath?: string;
}

/** The scopes named, each spelled exactly as contract §5 does; any other is refused (USAGE). */
export function checkedScopes(scopes: readonly string[]): Scope[] {
  const bad = scopes.filter((scope) => !isScope(scope));
  if (bad.length > 0) {
    throw new FleetError(
      'USAGE',
      `unknown scope${bad.length > 1 ? 's' : ''} ${bad.map((s) => JSON.stringify(s)).join(', ')}`,
      {
        suggestions: [
          'scopes are spelled exactly: config:read, config:install, config:adopt, versions:read, runtime:upgrade, node-admin:bootstrap, node-admin:tokens',
        ],
      },
    );
  }
  return scopes.filter(isScope);
}

@injectable()
export class TokenService {
  /** Issues a token for `client`: on the node's store, or through the host's controller. */
  async issue(options: TokenIssueOptions): Promise<TokenIssueOutcome> {
    const { target } = options;
    if (target.host !== undefined) {
      const remote = await remoteOf(target);
      const operationId = newOperationId();
      const issued = await remote.client.tokenIssue({
        operationId,
        client: options.client,
        scopes: [...options.scopes],
        ttlMs: options.ttlMs,
      });
      await recordTokenVerb(
        'token issue',
        target.host,
        operationId,
        `issued ${issued.id} for ${issued.client}`,
        [issued.token],
      );
      return {
        issued: {
          id: issued.id,
          token: issued.token,
          client: issued.client,
          scopes: issued.scopes,
          expiresAt: issued.expiresAt,
        },
        lifetimeCut: Date.parse(issued.expiresAt) < Date.now() + options.ttlMs - 60_000,
      };
    }
    const store = await openStore(target.home);
    const { record, token } = await store.issue({
      client: options.client,
      scopes: options.scopes,
      ttlMs: options.ttlMs,
    });
    return {
      issued: {
        id: record.id,
        token,
        client: record.client,
        scopes: record.scopes,
        expiresAt: record.expiresAt,
      },
      lifetimeCut: false,
    };
  }

  /** Every token of the store (never the secrets), with its issuer and lineage where known. */
  async list(options: { readonly target: TokenTarget }): Promise<TokenListOutcome> {
    const { target } = options;
    if (target.host !== undefined) {
      const remote = await remoteOf(target);
      const answer = await listWithLineage(remote.client);
      return { listed: { tokens: answer.tokens, self: answer.self }, lineage: answer.lineage };
    }
    // Lazy: only the local branch needs the controller (packages/operator/README.md, Lazy imports kept).
    const { lineageOf, tokenState } = await import('@fleet/controller');
    const store = await openStore(target.home);
    const now = new Date();
    const records = await store.list();
    const tokens = records.map((record) => {
      const { sha256, issuedBy, ...shown } = record;
      void sha256; // the hash is not shown: nothing the operator needs
      return {
        ...shown,
        state: tokenState(record, now),
        issuedBy: issuedBy ?? null,
        lineage: lineageOf(records, record.id),
      };
    });
    return { listed: { tokens }, lineage: true };
  }

  /**
   * Replaces a token with a new one for the same client and scopes; through a controller, rotating
   * the operator's own token writes the new one into the credentials file.
   */
  async rotate(options: TokenRotateOptions): Promise<TokenRotateOutcome> {
    const { target } = options;
    if (target.host !== undefined) return rotateThroughController(target, options);
    if (options.id === undefined) {
      throw new FleetError('USAGE', 'name the token to rotate (fleet token list shows the ids)');
    }
    const store = await openStore(target.home);
    const { record, token, previous } = await store.rotate(options.id, {
      graceMs: options.graceMs,
      ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    });
    return {
      rotated: {
        id: record.id,
        token,
        client: record.client,
        scopes: record.scopes,
        expiresAt: record.expiresAt,
        rotatedFrom: previous.id,
        graceUntil: previous.graceUntil as string,
      },
    };
  }

  /**
   * Revokes a token and every token minted from it; through a controller, the operator's own
   * token for the host is refused unless `self` (nothing is sent).
   */
  async revoke(options: TokenRevokeOptions): Promise<TokenRevokeOutcome> {
    const { target } = options;
    if (target.host !== undefined) {
      const remote = await remoteOf(target);
      checkRevoke(remote, options.id, options.self);
      const operationId = newOperationId();
      const revoked = await revokeWithMinted(remote.client, {
        operationId,
        id: options.id,
        self: options.self,
      });
      const minted = revoked.minted;
      const also = minted === undefined ? '' : `, and ${mintedText(minted)}`;
      await recordTokenVerb(
        'token revoke',
        target.host,
        operationId,
        `revoked ${revoked.id}${also}`,
        [],
      );
      return {
        revoked: {
          id: revoked.id,
          client: revoked.client,
          revokedAt: revoked.revokedAt,
          self: revoked.self,
          ...(minted === undefined ? {} : { minted }),
        },
        credentialsPath: remote.credentialsPath,
      };
    }
    const store = await openStore(target.home);
    const { record, minted } = await store.revokeWithMinted(options.id);
    return {
      revoked: {
        id: record.id,
        client: record.client,
        revokedAt: record.revokedAt as string,
        minted: minted.map((token) => token.id),
      },
    };
  }
}

function remoteOf(target: TokenHostTarget): Promise<RemoteTokens> {
  return remoteTokens(target.root, target.host, target.timeoutMs);
}

async function rotateThroughController(
  target: TokenHostTarget,
  options: TokenRotateOptions,
): Promise<TokenRotateOutcome> {
  const remote = await remoteOf(target);
  const rotated = await rotateRemote(remote, options.id, {
    graceMs: options.graceMs,
    ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    note: (line) => options.onNote?.(line),
  });
  const { issued } = rotated;
  await recordTokenVerb(
    'token rotate',
    target.host,
    rotated.operationId,
    `${issued.rotatedFrom ?? ''} -> ${issued.id}${rotated.credentialsUpdated ? ', credentials file updated' : ''}`,
    [issued.token],
  );
  return {
    rotated: {
      id: issued.id,
      token: issued.token,
      client: issued.client,
      scopes: issued.scopes,
      expiresAt: issued.expiresAt,
      rotatedFrom: issued.rotatedFrom as string,
      graceUntil: issued.graceUntil as string,
      credentialsUpdated: rotated.credentialsUpdated,
    },
    credentialsPath: remote.credentialsPath,
  };
}

/**
 * The token store under `home` (default: the user's home). Lazy: only the node's own branch needs
 * the controller, which `--host` would otherwise load (packages/operator/README.md, Lazy imports
 * kept).
 */
async function openStore(home: string | undefined): Promise<TokenStore> {
  const { TokenStore, statePaths, systemClock } = await import('@fleet/controller');
  return new TokenStore(statePaths(await realpath(home ?? homedir())), systemClock);
}
