/**
 * The transport of the config verbs' reads: one `snapshot` request per host carries every live
 * file the host's targets name, each redacted on the node, with the node's record of what fleet
 * wrote there (known versions, and what tells `deleted` from `missing`: contract §8.2). Backups
 * are not asked for: they are no known versions.
 */
import { liveFilesOf, snapshotFilesOf } from '@fleet/core';
import type { FileTarget, ProbeAnswer, ReadLive, ReadSnapshot, SnapshotProbe } from '@fleet/core';
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
 * The same request carrying the domains' probers too (`probes`): drift's files and its derived
 * and runtime layers in one request per host.
 */
export function readSnapshotThroughController(context: FleetContext): ReadSnapshot {
  return async (host, targets, probes) => {
    const answer = await context.client(host).snapshot({
      files: snapshotFilesOf(targets),
      backups: false,
      ...(probes.length > 0
        ? {
            probes: probes.map((p) => ({
              prober: p.prober,
              ...(p.domain === undefined ? {} : { domain: p.domain }),
              parameters: p.parameters as SnapshotProbe['parameters'],
            })),
          }
        : {}),
    });
    const answers: ProbeAnswer[] = (answer.probes ?? []).map((probe) =>
      probe.state === 'ok'
        ? { prober: probe.prober, state: 'ok', facts: probe.facts }
        : { prober: probe.prober, state: 'error', code: probe.code, message: probe.message },
    );
    return { files: liveFilesOf(answer), probes: answers };
  };
}
