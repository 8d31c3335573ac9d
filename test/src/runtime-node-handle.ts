/**
 * What a suite holds of a runtime node (`RuntimeNode`, runtime-node.ts) and the parts it is made
 * of once the node's unit is installed: `fleet token issue` run on the node as its user, a client
 * of its controller once that answers (else the unit's status says why not), and the disposer that
 * stops and removes the unit and the home once, after any runner still writing there has ended.
 */
import { execFileSync } from 'node:child_process';
import { createControllerClient, type ControllerClient } from '@fleet/core';
import { runtimeLockHolder } from '@fleet/controller';
import type { RuntimeArtifact } from './artifact.js';
import { waitFor } from './fleet.js';
import { NODE_ID } from './runtime-node-expectation.js';
import type { SystemdUser, UserRun } from './systemd-user.js';

export interface RuntimeNode {
  readonly manager: SystemdUser;
  readonly home: string;
  readonly port: number;
  /** The node's unit (`fleet-controller-<hex>.service`), as it recorded it. */
  readonly unit: string;
  readonly client: ControllerClient;
  /** The real runtime the node starts from (generation A). */
  readonly artifact: RuntimeArtifact;
  /** `systemctl --user show` of the node's unit. */
  unitState(properties?: readonly string[]): Promise<Record<string, string>>;
  /** `systemctl --user ARGS UNIT` as the node's user. */
  systemctl(verb: string): Promise<UserRun>;
  /** A token issued on the node itself (`fleet token issue`, as its user). */
  issueToken(client: string, scopes: readonly string[]): Promise<string>;
  dispose(): Promise<void>;
}

/** `fleet token issue` on the node itself, as its user. */
export function tokenIssuer(manager: SystemdUser, home: string): RuntimeNode['issueToken'] {
  return async (client, scopes) => {
    const issued = await manager.fleet([
      'token',
      'issue',
      '--home',
      home,
      '--client',
      client,
      ...scopes.flatMap((scope) => ['--scope', scope]),
      '--json',
    ]);
    if (issued.exitCode !== 0) {
      const ended = issued.signal ? `signal ${issued.signal}` : `exit ${issued.exitCode}`;
      throw new Error(`fleet token issue (${ended}): ${issued.stderr}${issued.stdout}`);
    }
    return (JSON.parse(issued.stdout) as { token: string }).token;
  };
}

/** Stops and removes the node's unit and home, once however often it is called. */
export function nodeDisposer(
  manager: SystemdUser,
  home: string,
  unit: string,
): () => Promise<void> {
  let disposed = false;
  return async () => {
    // Once only: a suite's afterEach still holds the previous node when a beforeEach failed.
    if (disposed) return;
    disposed = true;
    // A runner still finishing a transaction writes under the home: let it end first.
    await waitFor(
      async () => (await runtimeLockHolder(home)) === null,
      60_000,
      'the runtime runner to finish',
    ).catch(() => undefined);
    await manager.systemctl('stop', unit);
    await manager.systemctl('disable', unit);
    await manager.systemctl('daemon-reload');
    execFileSync('chmod', ['-R', 'u+w', home]);
    execFileSync('rm', ['-rf', home]);
  };
}

/** A client of the node's controller, once it answers; else the unit's status says why not. */
export async function answeringClient(
  manager: SystemdUser,
  unit: string,
  port: number,
  token: string,
): Promise<ControllerClient> {
  const client = createControllerClient({
    host: NODE_ID,
    url: `http://127.0.0.1:${port}`,
    token,
    timeoutMs: 120_000,
  });
  await waitFor(
    async () => (await client.identity().catch(() => null)) !== null,
    90_000,
    'the controller of generation A',
  ).catch(async (error: Error) => {
    const status = await manager.systemctl('status', '--no-pager', '--lines=20', unit);
    throw new Error(`${error.message}; ${unit}:\n${status.stdout}${status.stderr}`);
  });
  return client;
}
