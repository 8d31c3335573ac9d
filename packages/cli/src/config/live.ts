/**
 * The transport of the config verbs' reads: one `snapshot` request per host carries every live
 * file the host's targets name, each redacted on the node, with the backups the node holds of it
 * (published versions too: contract §8.2).
 */
import type {
  FileTarget,
  LiveFile,
  ProbeAnswer,
  ReadLive,
  ReadSnapshot,
  SnapshotProbe,
  SnapshotResponse,
} from '@fleet/core';
import type { FleetContext } from './context.js';

export function readLiveThroughController(context: FleetContext): ReadLive {
  return async (host: string, targets: readonly FileTarget[]) => {
    const { snapshotFilesOf } = await import('@fleet/core');
    const answer = await context
      .client(host)
      .snapshot({ files: snapshotFilesOf(targets), backups: true });
    return liveFiles(answer);
  };
}

/**
 * The same request carrying the domains' probers too (`probes`): drift's files and its derived
 * and runtime layers in one request per host.
 */
export function readSnapshotThroughController(context: FleetContext): ReadSnapshot {
  return async (host, targets, probes) => {
    const { snapshotFilesOf } = await import('@fleet/core');
    const answer = await context.client(host).snapshot({
      files: snapshotFilesOf(targets),
      backups: true,
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
    return { files: liveFiles(answer), probes: answers };
  };
}

/** The answer's files as the drift engine reads them. */
function liveFiles(answer: SnapshotResponse): Map<string, LiveFile> {
  const live = new Map<string, LiveFile>();
  for (const file of answer.files) {
    if (file.state === 'refused') {
      live.set(file.path, { kind: 'refused', code: file.code, message: file.message });
    } else if (file.state === 'absent') {
      live.set(file.path, { kind: 'absent' });
    } else {
      live.set(file.path, {
        kind: 'present',
        content: file.content,
        sha256: file.sha256,
        backups: file.backups.map((backup) => ({ path: backup.path, content: backup.content })),
      });
    }
  }
  return live;
}
