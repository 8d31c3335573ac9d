/**
 * The lab's tokens: one per node, issued into that node's own token store (as `fleet token issue`
 * would on a real node), and the operator's credentials file (contract §3) holding them, 0600.
 */
import { open, realpath } from 'node:fs/promises';
import { FleetError, forEachHost, type Credentials, type Scope } from '@fleet/core';
import { TokenStore, statePaths, systemClock } from '@fleet/controller';

/**
 * Every scope an operator's verbs use against a node, `node-admin:tokens` included: the lab's
 * operator rotates its own tokens from the seat (`fleet token rotate --host H`).
 */
export const OPERATOR_SCOPES: readonly Scope[] = [
  'config:read',
  'config:install',
  'config:adopt',
  'versions:read',
  'runtime:upgrade',
  'node-admin:bootstrap',
  'node-admin:tokens',
];

export const LAB_CLIENT = 'lab-operator';
/** A lab is a sandbox that may live for months; its tokens do not expire under it. */
const LAB_TOKEN_TTL_MS = 5 * 365 * 86_400_000;

/** Issues one operator token per node; returns the credentials document. */
export async function issueLabTokens(homes: ReadonlyMap<string, string>): Promise<Credentials> {
  const outcomes = await forEachHost(
    [...homes.keys()],
    async (host) => {
      const store = new TokenStore(
        statePaths(await realpath(homes.get(host) as string)),
        systemClock,
      );
      return (
        await store.issue({ client: LAB_CLIENT, scopes: OPERATOR_SCOPES, ttlMs: LAB_TOKEN_TTL_MS })
      ).token;
    },
    { concurrency: 16 },
  );
  const hosts: Record<string, { token: string }> = {};
  for (const outcome of outcomes) {
    if (!outcome.ok) {
      throw new FleetError(outcome.error.code, `${outcome.host}: ${outcome.error.message}`);
    }
    hosts[outcome.host] = { token: outcome.value };
  }
  return { version: 1, hosts };
}

/** Writes the credentials file, 0600 from creation (never briefly wider), refusing to overwrite. */
export async function writeCredentials(path: string, credentials: Credentials): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.chmod(0o600); // the umask can only narrow; this pins it exactly
    await handle.writeFile(`${JSON.stringify(credentials, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
