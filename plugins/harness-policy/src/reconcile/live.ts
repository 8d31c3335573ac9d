/**
 * The reconcile's reads, as `fleet drift` and `config install` make them: one `snapshot` request
 * per host carrying every target path, each file redacted on the node, with the backups the node
 * holds of it (published versions too, contract §8.2). The CLI has the same adapter; a plugin cannot
 * import the CLI, and this one is a dozen lines over core's client.
 */
import { snapshotFilesOf, type ControllerClient, type LiveFile, type ReadLive } from '@fleet/core';

export function readLiveThrough(client: (host: string) => ControllerClient): ReadLive {
  return async (host, targets) => {
    const answer = await client(host).snapshot({ files: snapshotFilesOf(targets), backups: true });
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
