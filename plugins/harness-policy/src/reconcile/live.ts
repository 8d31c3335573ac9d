/**
 * The reconcile's reads, as `fleet drift` and `config install` make them: one `snapshot` request
 * per host carrying every target path, each file redacted on the node, with the node's record of
 * what fleet wrote there (contract §8.2). The CLI has the same adapter; a plugin cannot import the
 * CLI, and this one is a few lines over core's client.
 */
// The operator's services (a plugin's own operator-side command): core's main entry, not the
// plugin API (src/plugin.ts says why).
import { liveFilesOf, snapshotFilesOf } from '@fleet/core';
import type { ControllerClient, ReadLive } from '@fleet/core';

export function readLiveThrough(client: (host: string) => ControllerClient): ReadLive {
  return async (host, targets) =>
    liveFilesOf(await client(host).snapshot({ files: snapshotFilesOf(targets), backups: false }));
}
