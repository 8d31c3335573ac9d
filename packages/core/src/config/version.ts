/**
 * `fleet version` (contract §11), operator side: one `POST /v1/versions` per host (concurrently,
 * bounded, each with the client's timeout), then pure evaluation of what the node observed
 * against the repository: the runtime's version against `canonicalVersion` (and its build
 * against the canonical artifact, when fleet.yaml names one), each probed tool (`probes.tools`),
 * PATH shadowing among the `fleet` executables and among each probed tool's executables along the
 * node's PATH (the policy's, the user's login PATH, or the controller's), each plugin fleet.yaml names against
 * the ones the node loaded from its generation (contract §10.5), and on macOS fleet's launchd
 * agents.
 * A host that cannot be reached is `unreachable`, one that fails otherwise `error`, as in drift.
 * The same read runs the host's supervisor prober (`systemd-user.unit`, `windows-task.task`):
 * a stopped, disabled or stale controller unit, or one whose ExecStart is not the `current`
 * generation, is a `runtime` item (contract §12, supervision drift), as `fleet drift` reports it.
 *
 * This module evaluates one host's answer as a whole and runs the report over the fleet; the parts
 * are siblings, re-exported here for core's entry points: version-desired.ts (what the repository
 * wants of a host), version-items.ts (the runtime, tool, plugin and launchd items),
 * version-shadowing.ts (the PATH shadowing table), version-supervisor.ts (the supervisor's
 * prober items) and version-transport.ts (the request and the controller client's transport).
 */
import { asFleetError, forEachHost } from '../client/for-each-host.js';
import type { FleetErrorLike } from '../errors.js';
import { hostEntry, type FleetRepo } from '../repo/load.js';
import { failedHostStatus } from '../report/drift-report.js';
import {
  buildVersionReport,
  versionHostStatus,
  type VersionHost,
  type VersionItem,
  type VersionReport,
} from '../report/version-report.js';
import type { RuntimeSummary } from '../wire/summary.js';
import type { VersionsResponse } from '../wire/versions.js';
import type { ProberRuntime } from './drift-inputs.js';
import { runtimeJournalProblem, withJournal } from './runtime-journal.js';
import { versionDesired, type VersionDesired } from './version-desired.js';
import { launchdItems, pluginItems, runtimeItem, toolItems } from './version-items.js';
import { shadowingItems } from './version-shadowing.js';
import { supervisorItems, supervisorProbersFor } from './version-supervisor.js';
import { versionsRequestFor, type ReadVersions } from './version-transport.js';

// Where core's entry points, status.ts and the tests have always imported them from.
export { versionDesired, type VersionDesired } from './version-desired.js';
export { pluginItems, runtimeItem } from './version-items.js';
export { findShadowing, type Shadowing } from './version-shadowing.js';
export { supervisorItems, supervisorProbersFor } from './version-supervisor.js';
export {
  readVersionsThrough,
  refusedProbesKey,
  versionsRequestFor,
  type ReadVersions,
} from './version-transport.js';

/** Every item one host's answer amounts to (its supervisor's with `probers`). Pure. */
export function versionItems(
  answer: VersionsResponse,
  desired: VersionDesired,
  probers: readonly ProberRuntime[] = [],
  host = answer.nodeId,
  /** The host's runtime journal summary (`GET /v1/summary`), when it was read. */
  journal: RuntimeSummary | null = null,
): VersionItem[] {
  return [
    withJournal(runtimeItem(answer, desired), runtimeJournalProblem(host, journal)),
    ...toolItems(answer, desired),
    ...pluginItems(answer.plugins, desired.plugins ?? []),
    ...shadowingItems(answer.fleet),
    ...(answer.launchd ? launchdItems(answer.launchd) : []),
    ...supervisorItems(host, answer.probes, supervisorProbersFor(probers, desired), desired),
  ];
}

/** One host's entry of the report from its answer. Pure. */
export function versionHost(
  host: string,
  answer: VersionsResponse,
  desired: VersionDesired,
  probers: readonly ProberRuntime[] = [],
  journal: RuntimeSummary | null = null,
): VersionHost {
  const items = versionItems(answer, desired, probers, host, journal);
  return {
    host,
    status: versionHostStatus(items),
    runtime: {
      package: answer.package,
      version: answer.version,
      build: answer.build,
      development: answer.build.sha256 === null,
      platform: answer.platform,
      ...(answer.loginPath === undefined ? {} : { loginPath: answer.loginPath }),
    },
    items,
  };
}

function failedHost(host: string, error: FleetErrorLike): VersionHost {
  return {
    host,
    status: failedHostStatus(error),
    detail: `${error.code}: ${error.message}`,
    items: [],
  };
}

export interface VersionInput {
  readonly repo: FleetRepo;
  /** The repository commit the report is of (`git rev-parse HEAD`). */
  readonly repoCommit: string;
  readonly readVersions: ReadVersions;
  /**
   * The host's runtime journal summary (`GET /v1/summary`, read beside the versions): an open or
   * failed transaction makes the runtime item not current (issue 36). A failed read is no word.
   */
  readonly readRuntimeSummary?: (host: string) => Promise<RuntimeSummary | null>;
  /** The supervisors' probers (core `loadSupervisorProbers`): each host is asked for its own's. */
  readonly probers?: readonly ProberRuntime[];
  /** Hosts to ask (default: every host in fleet.yaml). */
  readonly hosts?: readonly string[];
  readonly concurrency?: number;
  readonly now: () => Date;
  readonly onHost?: (host: string, status: VersionHost['status']) => void;
}

export async function runVersionReport(input: VersionInput): Promise<VersionReport> {
  const hosts = input.hosts ?? Object.keys(input.repo.manifest.hosts).sort();
  for (const host of hosts) hostEntry(input.repo, host); // UNKNOWN_HOST before any request
  const outcomes = await forEachHost(
    hosts,
    async (host) => {
      const desired = versionDesired(input.repo, host);
      const probers = input.probers ?? [];
      const [answer, journal] = await Promise.all([
        input.readVersions(host, versionsRequestFor(desired, probers)),
        input.readRuntimeSummary?.(host).catch(() => null) ?? Promise.resolve(null),
      ]);
      return versionHost(host, answer, desired, probers, journal);
    },
    {
      ...(input.concurrency === undefined ? {} : { concurrency: input.concurrency }),
      onSettled: (outcome) =>
        input.onHost?.(
          outcome.host,
          outcome.ok ? outcome.value.status : failedHost(outcome.host, outcome.error).status,
        ),
    },
  );
  return buildVersionReport({
    generatedAt: input.now(),
    repoCommit: input.repoCommit,
    canonicalVersion: input.repo.manifest.canonicalVersion,
    hosts: outcomes.map((o) => (o.ok ? o.value : failedHost(o.host, asFleetError(o.error)))),
  });
}
