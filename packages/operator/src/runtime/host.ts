/**
 * One host, for the runtime verbs (upgrade, bootstrap): the repository, its fleet.yaml entry, the
 * node id it must report (hosts/<host>.yaml `node_id`, else the host's name), and a client for
 * its controller. A supervisor fleet cannot drive is refused before anything is read or sent.
 */
import type { ControllerClient, Credentials, FleetRepo, HostEntry } from '@fleet/core';
import * as core from '@fleet/core';

export interface HostRuntime {
  readonly root: string;
  readonly repo: FleetRepo;
  readonly host: string;
  readonly entry: HostEntry;
  readonly nodeId: string;
  readonly credentials: Credentials;
  readonly credentialsPath: string;
  readonly client: ControllerClient;
}

export async function loadHostRuntime(
  root: string,
  host: string,
  options: {
    readonly timeoutMs: number;
    /** The repository when the caller has read it already (one read for a fleet-wide verb). */
    readonly repo?: FleetRepo;
  },
): Promise<HostRuntime> {
  const repo = options.repo ?? (await core.loadRepo(root));
  const entry = core.hostEntry(repo, host);
  if (entry.supervisor === 'none') {
    throw new core.FleetError(
      'USAGE',
      `${host} has no supervisor (supervisor: none): fleet cannot restart its runtime, so it cannot upgrade or bootstrap it`,
    );
  }
  const credentialsPath = core.defaultCredentialsPath(process.env);
  const credentials = await core.loadCredentials(credentialsPath);
  const client = core.clientForHost({
    repo,
    host,
    credentials,
    credentialsPath,
    timeoutMs: options.timeoutMs,
  });
  const nodeId = core.hostVariables(repo, host)['node_id'] ?? host;
  return { root, repo, host, entry, nodeId, credentials, credentialsPath, client };
}
