/**
 * The last steps of `fleet lab up` (up.ts), whatever runs the controllers: the fleet repository
 * written with every node's real controller URL (a new lab only), every controller checked to
 * answer `/v1/identity` with its node id through the operator's own client, and only then
 * `lab.json`. The caller undoes what it started when this throws.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  FleetError,
  createControllerClient,
  forEachHost,
  tokenFor,
  type Credentials,
  type LabDocument,
} from '@fleet/core';
import { buildLabRepo } from './repo.js';
import { writeJsonAtomic } from './state.js';
import type { LabKeys } from './up-nodes.js';
import type { LabUpPlan } from './up-plan.js';

/** A controller that runs: where it answers, the node id it was started with, its pid. */
export interface LabStartedNode {
  readonly controller: string;
  readonly nodeId: string;
  readonly pid: number;
}

export async function finishLabUp(options: {
  readonly plan: LabUpPlan;
  readonly keys: LabKeys;
  readonly nodes: ReadonlyMap<string, LabStartedNode>;
  /** What fleet.yaml declares beyond the hosts (repo.ts). */
  readonly repo: Pick<Parameters<typeof buildLabRepo>[0], 'domains' | 'supervisor'>;
  readonly deadline: number;
  readonly progress: (line: string) => void;
}): Promise<LabDocument> {
  const { plan, keys, progress } = options;
  const { lab, hosts } = plan;
  const nodeOf = (host: string) => options.nodes.get(host) as LabStartedNode;
  if (!plan.previous) {
    progress('writing the fleet repository');
    await buildLabRepo({
      root: lab.repo,
      hosts: hosts.map((host) => ({
        name: host,
        controller: nodeOf(host).controller,
        nodeId: nodeOf(host).nodeId,
      })),
      ...options.repo,
      signingKey: keys.signingKey,
      nodeActions: plan.nodeActions,
    });
  }
  progress('checking every controller answers /v1/identity with its node id');
  await verifyIdentities(hosts, nodeOf, keys.credentials, options.deadline);
  const document: LabDocument = {
    repo: lab.repo,
    credentials: lab.credentials,
    hosts: hosts.map((host) => ({
      name: host,
      home: plan.homes.get(host) as string,
      controller: nodeOf(host).controller,
      pid: nodeOf(host).pid,
    })),
  };
  await writeJsonAtomic(lab.labFile, document);
  return document;
}

/** Every controller answers `/v1/identity` with the node id it was started with. */
async function verifyIdentities(
  hosts: readonly string[],
  nodeOf: (host: string) => LabStartedNode,
  credentials: Credentials,
  deadline: number,
): Promise<void> {
  const outcomes = await forEachHost(
    hosts,
    async (host) => {
      const expected = nodeOf(host).nodeId;
      const client = createControllerClient({
        host,
        url: nodeOf(host).controller,
        token: tokenFor(credentials, host, 'credentials.json'),
        timeoutMs: 10_000,
      });
      for (;;) {
        try {
          const identity = await client.identity();
          if (identity.nodeId !== expected) {
            throw new FleetError(
              'VERIFICATION_FAILED',
              `${host}: identity reports node id ${identity.nodeId}, not ${expected}`,
            );
          }
          return identity;
        } catch (error) {
          // A controller that printed its URL already listens; retry only what could be a race.
          const code = (error as { code?: string }).code;
          if (code !== 'HOST_UNREACHABLE' || Date.now() > deadline) throw error;
          await sleep(100);
        }
      }
    },
    { concurrency: 32 },
  );
  const failed = outcomes.filter((outcome) => !outcome.ok);
  if (failed.length > 0) {
    const first = failed[0];
    throw new FleetError(
      'VERIFICATION_FAILED',
      `${failed.length} of ${hosts.length} controllers did not answer identity: ${first && !first.ok ? first.error.message : ''}`,
    );
  }
}
