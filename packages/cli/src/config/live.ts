/**
 * The transport of the config verbs' reads: one `snapshot` request per host carries every live
 * file the host's targets name, each redacted on the node, with the backups the node holds of it
 * (published versions too: SPEC §8.2).
 */
import type { FileTarget, LiveFile, ReadLive } from '@fleet/core';
import type { FleetContext } from './context.js';

export function readLiveThroughController(context: FleetContext): ReadLive {
  return async (host: string, targets: readonly FileTarget[]) => {
    const paths = [...new Set(targets.map((target) => target.path))];
    const answer = await context.client(host).snapshot({ paths, backups: true });
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
  };
}
