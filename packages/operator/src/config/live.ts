/**
 * The transport of the config verbs' reads: one `snapshot` request per host carries every live
 * file the host's targets name, each redacted on the node, with the node's record of what fleet
 * wrote there (known versions, and what tells `deleted` from `missing`: contract §8.2). Backups
 * are not asked for: they are no known versions.
 */
import { liveFilesOf, snapshotFilesOf } from '@fleet/core';
import type {
  ControllerClient,
  FileTarget,
  LiveFile,
  ProbeAnswer,
  ReadLive,
  ReadSnapshot,
  SnapshotRequest,
  SnapshotResponse,
} from '@fleet/core';
import type { FleetContext } from './context.js';
import { OUTDATED_BYTES, olderNodeRequest, outdatedEntries } from './older-node.js';

export function readLiveThroughController(context: FleetContext): ReadLive {
  return async (host: string, targets: readonly FileTarget[]) => {
    const request: SnapshotRequest = { files: snapshotFilesOf(targets), backups: false };
    return (await snapshotOfAnyNode(context.client(host), request)).files;
  };
}

/**
 * The same request carrying the domains' probers too (`probes`), and the runtime journal summary
 * when drift asks (`runtime`): drift's files, its derived and runtime layers and the word on an
 * open runtime transaction in one request per host (contract §14).
 */
export function readSnapshotThroughController(context: Pick<FleetContext, 'client'>): ReadSnapshot {
  return async (host, targets, probes, options) => {
    const request: SnapshotRequest = {
      files: snapshotFilesOf(targets),
      backups: false,
      ...(probes.length > 0
        ? {
            probes: probes.map((p) => ({
              prober: p.prober,
              ...(p.domain === undefined ? {} : { domain: p.domain }),
              parameters: p.parameters as NonNullable<
                SnapshotRequest['probes']
              >[number]['parameters'],
            })),
          }
        : {}),
      ...(options?.runtime === true ? { runtime: true } : {}),
    };
    const { answer, files } = await snapshotOfAnyNode(context.client(host), request);
    const answers: ProbeAnswer[] = (answer.probes ?? []).map((probe) =>
      probe.state === 'ok'
        ? { prober: probe.prober, state: 'ok', facts: probe.facts }
        : { prober: probe.prober, state: 'error', code: probe.code, message: probe.message },
    );
    return {
      files,
      probes: answers,
      ...(answer.runtime === undefined ? {} : { runtime: answer.runtime }),
    };
  };
}

/**
 * One snapshot request, in one round trip to a current node. A node that predates one of its
 * optional fields refuses it by name (older-node.ts) and is asked again without it: without
 * `runtime` its answer carries no summary (drift reads `/v1/summary` apart), without `bytes` each
 * byte-exact entry is answered `NODE_OUTDATED` and the host's other entries are read as usual.
 * Each retry leaves out a field the request still had, so there are at most two.
 */
async function snapshotOfAnyNode(
  client: Pick<ControllerClient, 'snapshot'>,
  request: SnapshotRequest,
): Promise<{ answer: SnapshotResponse; files: Map<string, LiveFile> }> {
  let sent = request;
  let outdated: string[] = [];
  for (;;) {
    try {
      const answer = await client.snapshot(sent);
      const files = liveFilesOf(answer);
      for (const path of outdated) files.set(path, OUTDATED_BYTES);
      return { answer, files };
    } catch (error) {
      const older = olderNodeRequest(sent, error);
      if (older === null) throw error;
      if (older.withoutBytes) outdated = outdatedEntries(sent);
      sent = older.request;
    }
  }
}
