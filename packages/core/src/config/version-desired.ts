/**
 * What the repository wants of one host for `fleet version` (contract §11): fleet.yaml's
 * `canonicalVersion` and its artifact, the tools the host's `probes.tools` names, the plugins
 * fleet.yaml pins (contract §10.5), its `supervisor` and its variables. Every part of the
 * evaluation (version-items.ts, version-supervisor.ts) and the request (version-transport.ts)
 * reads it, so it sits below them all.
 */
import { hostEntry, hostVariables, type FleetRepo } from '../repo/load.js';
import type { PinnedPlugin } from '../schemas/runtime-plugins.js';

/** What the repository wants of one host. */
export interface VersionDesired {
  readonly canonicalVersion: string;
  /** fleet.yaml's artifact of the canonical version, when it names one. */
  readonly artifact?: { readonly sha256: string; readonly commit: string } | undefined;
  /** The tools the host's `probes.tools` names. */
  readonly tools: readonly string[];
  /** The plugins fleet.yaml names (`plugins`): every node must carry each, as pinned. */
  readonly plugins?: readonly PinnedPlugin[];
  /** The host's fleet.yaml `supervisor` (its prober is asked for), when it names one. */
  readonly supervisor?: string | undefined;
  /** Its variables (`hosts/<host>.yaml`): the supervisor prober checks `node_id` against them. */
  readonly variables?: Readonly<Record<string, string>>;
}

/** What the repository wants of `host`. */
export function versionDesired(repo: FleetRepo, host: string): VersionDesired {
  const canonicalVersion = repo.manifest.canonicalVersion;
  const artifact = repo.manifest.artifacts.find((a) => a.version === canonicalVersion);
  const entry = hostEntry(repo, host);
  return {
    canonicalVersion,
    artifact: artifact ? { sha256: artifact.sha256, commit: artifact.commit } : undefined,
    tools: entry.probes?.tools ?? [],
    plugins: repo.manifest.plugins,
    supervisor: entry.supervisor,
    variables: hostVariables(repo, host),
  };
}
