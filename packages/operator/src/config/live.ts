/**
 * The transport of the config verbs' reads: one `snapshot` request per host carries every live
 * file the host's targets name, each redacted on the node, with the node's record of what fleet
 * wrote there (known versions, and what tells `deleted` from `missing`: contract §8.2). Backups
 * are not asked for: they are no known versions.
 */
import { isFleetError, liveFilesOf, snapshotFilesOf } from '@fleet/core';
import type {
  FileTarget,
  ProbeAnswer,
  ReadLive,
  ReadSnapshot,
  SnapshotRequest,
  SnapshotResponse,
} from '@fleet/core';
import type { FleetContext } from './context.js';

export function readLiveThroughController(context: FleetContext): ReadLive {
  return async (host: string, targets: readonly FileTarget[]) => {
    const answer = await context
      .client(host)
      .snapshot({ files: snapshotFilesOf(targets), backups: false });
    return liveFilesOf(answer);
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
    const answer = await snapshotOrOlder(context, host, request);
    const answers: ProbeAnswer[] = (answer.probes ?? []).map((probe) =>
      probe.state === 'ok'
        ? { prober: probe.prober, state: 'ok', facts: probe.facts }
        : { prober: probe.prober, state: 'error', code: probe.code, message: probe.message },
    );
    return {
      files: liveFilesOf(answer),
      probes: answers,
      ...(answer.runtime === undefined ? {} : { runtime: answer.runtime }),
    };
  };
}

/**
 * A node that predates the snapshot's `runtime` field refuses the request as `BAD_REQUEST` (strict
 * objects): it is asked again without it, and drift reads the summary apart (`GET /v1/summary`).
 */
async function snapshotOrOlder(
  context: Pick<FleetContext, 'client'>,
  host: string,
  request: SnapshotRequest,
): Promise<SnapshotResponse> {
  try {
    return await context.client(host).snapshot(request);
  } catch (error) {
    if (request.runtime !== true || !isFleetError(error) || error.code !== 'BAD_REQUEST')
      throw error;
    const { runtime: _asked, ...older } = request;
    return context.client(host).snapshot(older);
  }
}
