/**
 * `fleet token … --host H` (contract §5 "Tokens", §7): a node's tokens administered from the
 * operator seat through its controller (`node-admin:tokens`), with the operator's token for H
 * from the credentials file. Rotating that very token writes the new one into the credentials
 * file atomically — the file's temp sibling is created before the node is asked, so a token the
 * node mints (shown once) always has somewhere to go; if the final rename still fails, the token
 * is printed on stderr with the deadline of the old one's grace. The node refuses to revoke the
 * calling token unless told (`--self`); this side refuses first, with the advice to rotate.
 */
import type { ControllerClient, Credentials, IssuedTokenResponse } from '@fleet/core';
import { FleetError, recordOperatorVerb } from '@fleet/core';
import * as core from '@fleet/core';

export interface RemoteTokens {
  readonly host: string;
  readonly client: ControllerClient;
  readonly credentialsPath: string;
  /** The id of the credentials file's token for the host (`null`: not a per-client token). */
  readonly ownId: string | null;
}

export async function remoteTokens(
  root: string,
  host: string,
  timeoutMs: number,
): Promise<RemoteTokens> {
  const repo = await core.loadRepo(root);
  core.hostEntry(repo, host);
  const credentialsPath = core.defaultCredentialsPath(process.env);
  const credentials = await core.loadCredentials(credentialsPath);
  const client = core.clientForHost({ repo, host, credentials, credentialsPath, timeoutMs });
  const own = core.tokenFor(credentials, host, credentialsPath);
  return { host, client, credentialsPath, ownId: core.tokenAccessor(own) ?? null };
}

export interface RemoteRotation {
  readonly issued: IssuedTokenResponse;
  readonly operationId: string;
  /** True when it was the operator's own token for the host: the credentials file now holds the new one. */
  readonly credentialsUpdated: boolean;
}

/** Rotates `id` (default: the operator's own token for the host). */
export async function rotateRemote(
  remote: RemoteTokens,
  id: string | undefined,
  options: {
    readonly graceMs: number;
    readonly ttlMs?: number;
    readonly note: (line: string) => void;
  },
): Promise<RemoteRotation> {
  const target = id ?? remote.ownId;
  if (target === null) {
    throw new core.FleetError(
      'USAGE',
      `the credentials file's token for ${remote.host} is not a per-client token: name the token to rotate (fleet token list --host ${remote.host})`,
    );
  }
  const own = target === remote.ownId;
  const update = own ? await core.prepareCredentialsUpdate(remote.credentialsPath) : null;
  const operationId = core.newOperationId();
  let issued: IssuedTokenResponse;
  try {
    issued = await remote.client.tokenRotate({
      operationId,
      id: target,
      graceMs: options.graceMs,
      ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    });
  } catch (error) {
    await update?.abort();
    throw error;
  }
  if (update !== null) {
    try {
      await update.commit((current: Credentials) => ({
        ...current,
        hosts: {
          ...current.hosts,
          [remote.host]: { ...current.hosts[remote.host], token: issued.token },
        },
      }));
    } catch (error) {
      options.note(`the new token for ${remote.host} (shown once): ${issued.token}`);
      throw new core.FleetError(
        'IO_ERROR',
        `${remote.host} rotated token ${target} → ${issued.id}, but ${remote.credentialsPath} could not be replaced (${(error as Error).message}): put the new token printed above into it before ${issued.graceUntil ?? 'the old one expires'}`,
      );
    }
  }
  return { issued, operationId, credentialsUpdated: own };
}

/** Refuses, before anything is sent, to revoke the operator's own token for the host without `--self`. */
export function checkRevoke(remote: RemoteTokens, id: string, self: boolean): void {
  if (id !== remote.ownId || self) return;
  throw new FleetError(
    'USAGE',
    `token ${id} is the one ${remote.credentialsPath} holds for ${remote.host}: revoking it locks you out of ${remote.host} (every later request: AUTH_REVOKED); nothing was sent`,
    {
      suggestions: [
        `rotate it instead (fleet token rotate --host ${remote.host}), or pass --self to revoke it anyway`,
      ],
    },
  );
}

/** The operator log line of a token verb (never a token: both are scrubbed). */
export async function recordTokenVerb(
  verb: string,
  host: string,
  operationId: string,
  detail: string,
  secrets: readonly string[],
): Promise<void> {
  await recordOperatorVerb({ verb, host, operationId, outcome: 'ok', detail }, { secrets });
}
