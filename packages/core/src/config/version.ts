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
 */
import type { ControllerClient } from '../client/client.js';
import { asFleetError, forEachHost } from '../client/for-each-host.js';
import { isFleetError, type FleetErrorLike } from '../errors.js';
import { hostEntry, hostVariables, type FleetRepo } from '../repo/load.js';
import { failedHostStatus } from '../report/drift-report.js';
import {
  buildVersionReport,
  versionHostStatus,
  type VersionHost,
  type VersionItem,
  type VersionReport,
} from '../report/version-report.js';
import { compareSemver } from '../semver.js';
import { describePin, describePluginMismatch, pluginMismatches } from '../runtime/plugins.js';
import type { PinnedPlugin } from '../schemas/runtime-plugins.js';
import type { SnapshotProbeResult } from '../wire/snapshot.js';
import { LEGACY_LAUNCHD_LABEL } from '../wire/versions.js';
import type { RuntimeSummary } from '../wire/summary.js';
import { runtimeJournalProblem, withJournal } from './runtime-journal.js';
import type {
  FleetOnPath,
  LaunchdAgent,
  VersionsRequest,
  VersionsResponse,
} from '../wire/versions.js';
import type { ProberRuntime } from './drift-inputs.js';

/** The transport: one versions request to one host (the CLI passes the controller client). */
export type ReadVersions = (host: string, request: VersionsRequest) => Promise<VersionsResponse>;

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

// ---- PATH shadowing ---------------------------------------------------------------------------

export interface Shadowing {
  /** The earlier `fleet` that a shell runs instead. */
  readonly path: string;
  readonly reason: 'dead' | 'older';
  /** The later, better `fleet` it hides. */
  readonly shadows: string;
  readonly detail: string;
}

/**
 * The decision table of PATH shadowing: an entry shadows when a LATER entry is runnable and the
 * earlier one is dead (not runnable), or both report versions and the earlier one's is older.
 * A later dead entry never matters (the earlier one runs); entries of equal version, or whose
 * version cannot be compared, do not shadow. Each shadowing entry names the first later entry
 * it hides (for `older`, the newest later one).
 */
export function findShadowing(entries: readonly FleetOnPath[]): Shadowing[] {
  const out: Shadowing[] = [];
  entries.forEach((entry, index) => {
    const later = entries.slice(index + 1).filter((e) => e.runnable);
    if (later.length === 0) return;
    if (!entry.runnable) {
      const hidden = later[0] as FleetOnPath;
      out.push({
        path: entry.path,
        reason: 'dead',
        shadows: hidden.path,
        detail: `${entry.path} (${entry.detail}) comes first on PATH and hides ${hidden.path}${
          hidden.version ? ` (${hidden.version})` : ''
        }`,
      });
      return;
    }
    if (entry.version === null) return;
    let newest: FleetOnPath | undefined;
    for (const candidate of later) {
      if (candidate.version === null) continue;
      if (compareSemver(candidate.version, newest?.version ?? entry.version) === 1) {
        newest = candidate;
      }
    }
    if (newest) {
      out.push({
        path: entry.path,
        reason: 'older',
        shadows: newest.path,
        detail: `${entry.path} (${entry.version}) comes first on PATH and hides the newer ${newest.path} (${newest.version})`,
      });
    }
  });
  return out;
}

// ---- evaluation -------------------------------------------------------------------------------

/** The runtime against `canonicalVersion` (and the canonical artifact's build, when named). */
export function runtimeItem(
  answer: Pick<VersionsResponse, 'package' | 'version' | 'build'>,
  desired: Pick<VersionDesired, 'canonicalVersion' | 'artifact'>,
): VersionItem {
  const base = {
    layer: 'version' as const,
    kind: 'runtime' as const,
    name: answer.package,
    version: answer.version,
    expected: desired.canonicalVersion,
  };
  const order = compareSemver(answer.version, desired.canonicalVersion);
  const build =
    answer.build.sha256 === null
      ? 'development build (not run from a staged generation)'
      : `build ${answer.build.sha256.slice(0, 12)}${answer.build.commit ? ` (commit ${answer.build.commit.slice(0, 12)})` : ''}`;
  if (order === null) {
    return {
      ...base,
      state: 'error',
      detail: `${answer.version} is not a semantic version; ${build}`,
    };
  }
  if (order === -1) {
    return { ...base, state: 'stale', detail: `older than ${desired.canonicalVersion}; ${build}` };
  }
  if (order === 1) {
    return {
      ...base,
      state: 'diverged',
      detail: `newer than the canonical ${desired.canonicalVersion}; ${build}`,
    };
  }
  if (
    desired.artifact &&
    answer.build.sha256 !== null &&
    answer.build.sha256 !== desired.artifact.sha256
  ) {
    return {
      ...base,
      state: 'diverged',
      detail: `${build} is not the canonical artifact ${desired.artifact.sha256.slice(0, 12)}`,
    };
  }
  return { ...base, state: 'current', detail: build };
}

/** Where a tool was looked for, for a `missing` item's detail. */
function pathWords(answer: Pick<VersionsResponse, 'loginPath'>): string {
  switch (answer.loginPath?.source) {
    case 'policy':
      return "the node policy's versions.path";
    case 'login-shell':
      return "the user's login PATH";
    default:
      return "the controller's PATH";
  }
}

/** `also on PATH: /b/x (1.2.0), /c/x (dead: …)` for the entries after the one that runs. */
function othersOnPath(runs: string | undefined, onPath: readonly FleetOnPath[]): string {
  const others = onPath.filter((entry) => entry.path !== runs);
  if (others.length === 0) return '';
  const shown = others.map((entry) =>
    entry.runnable
      ? `${entry.path} (${entry.version ?? entry.detail})`
      : `${entry.path} (dead: ${entry.detail})`,
  );
  return `; also on PATH: ${shown.join(', ')}`;
}

/**
 * One probed tool: `current` when the executable a shell runs answered `--version`; `missing` when
 * nothing of its name can run — none on the PATH, only dead links, or the one that runs has lost
 * its interpreter (the ADR's removed Python: such a tool is not current); `error` when it failed.
 * Each carries every executable of the name along the PATH, in order (`onPath`).
 */
function toolItem(name: string, answer: VersionsResponse): VersionItem {
  const base = { layer: 'version' as const, kind: 'tool' as const, name };
  const tool = answer.tools.find((t) => t.name === name);
  if (!tool) return { ...base, state: 'error', detail: 'the node did not report this tool' };
  if (tool.state === 'refused') {
    // Not probed: the node decides what runs on it (contract §5.1).
    return { ...base, state: 'error', detail: tool.detail };
  }
  const onPath = tool.onPath ?? [];
  const listed = onPath.length === 0 ? {} : { onPath };
  if (tool.state === 'missing') {
    return {
      ...base,
      ...(tool.path === undefined ? {} : { path: tool.path }),
      state: 'missing',
      detail: `${tool.detail ?? `${name} is not on ${pathWords(answer)}`}${othersOnPath(tool.path, onPath)}`,
      ...listed,
    };
  }
  if (tool.state === 'failed') {
    return {
      ...base,
      path: tool.path,
      state: 'error',
      detail: `${tool.detail}${othersOnPath(tool.path, onPath)}`,
      ...listed,
    };
  }
  const others = othersOnPath(tool.path, onPath);
  return {
    ...base,
    path: tool.path,
    state: 'current',
    version: tool.version,
    ...(others === '' ? {} : { detail: `runs ${tool.path}${others}` }),
    ...listed,
  };
}

function toolItems(answer: VersionsResponse, desired: VersionDesired): VersionItem[] {
  return [...new Set(desired.tools)].flatMap((name): VersionItem[] => {
    const tool = answer.tools.find((t) => t.name === name);
    const onPath = tool && tool.state !== 'refused' ? (tool.onPath ?? []) : [];
    // PATH shadowing of every probed tool, by the same decision table as `fleet`'s.
    const shadowing = findShadowing(onPath).map((s): VersionItem => ({
      layer: 'version',
      kind: 'shadowing',
      name,
      path: s.path,
      state: 'stale',
      detail: s.detail,
    }));
    return [toolItem(name, answer), ...shadowing];
  });
}

/**
 * Each plugin fleet.yaml names against the node's (its catalog's `plugins`): `current` when the
 * node loaded that version from that tarball, `missing` when it has none of that name, `diverged`
 * when it has another version or build. A runtime that reports no plugins carries none.
 */
export function pluginItems(
  carried: readonly PinnedPlugin[] | undefined,
  named: readonly PinnedPlugin[],
): VersionItem[] {
  const mismatches = pluginMismatches(named, carried ?? []);
  return named.map((pin): VersionItem => {
    const base = {
      layer: 'version' as const,
      kind: 'plugin' as const,
      name: pin.name,
      expected: pin.version,
      expectedSha256: pin.sha256,
    };
    const mismatch = mismatches.find((m) => m.expected.name === pin.name);
    if (!mismatch) {
      return {
        ...base,
        state: 'current',
        version: pin.version,
        sha256: pin.sha256,
        detail: `loaded from the generation: ${describePin(pin)}`,
      };
    }
    const where =
      carried === undefined
        ? "the node's runtime (which predates plugins in fleet.yaml)"
        : 'the node';
    const detail = `${describePluginMismatch(mismatch, where)}: upgrade it to an artifact that carries it (contract §10.5)`;
    if (mismatch.actual === null) return { ...base, state: 'missing', detail };
    return {
      ...base,
      state: 'diverged',
      version: mismatch.actual.version,
      sha256: mismatch.actual.sha256,
      detail,
    };
  });
}

function shadowingItems(entries: readonly FleetOnPath[]): VersionItem[] {
  const base = { layer: 'version' as const, kind: 'shadowing' as const };
  const found = findShadowing(entries);
  if (found.length > 0) {
    return found.map((s) => ({
      ...base,
      name: 'PATH',
      path: s.path,
      state: 'stale',
      detail: s.detail,
    }));
  }
  if (entries.length === 0) return [];
  const first = entries[0] as FleetOnPath;
  return [
    {
      ...base,
      name: 'PATH',
      path: first.path,
      state: 'current',
      detail: `${entries.length} fleet on PATH; no shadowing`,
      ...(first.version ? { version: first.version } : {}),
    },
  ];
}

function launchdItems(agents: readonly LaunchdAgent[]): VersionItem[] {
  const out: VersionItem[] = [];
  for (const agent of agents) {
    const base = { layer: 'runtime' as const, kind: 'launchd' as const, name: agent.label };
    if (!agent.present && !agent.loaded) continue; // not installed on this host: nothing to say
    if (LEGACY_LAUNCHD_LABEL.test(agent.label)) {
      out.push({
        ...base,
        state: 'stale',
        detail: `an agent of the old label scheme: fleet schedule install of the same report replaces it with dev.fleet.report-${agent.label.replace(/^.*(\.schedule\.|report-)/, '')}`,
      });
      continue;
    }
    const shown = `state ${agent.state ?? 'unknown'}${agent.pid === null ? '' : `, pid ${agent.pid}`}, last exit status ${agent.lastExitStatus ?? 'none'}`;
    if (agent.present && !agent.loaded) {
      out.push({
        ...base,
        state: 'missing',
        detail: 'its plist is present but launchd has not loaded it',
      });
    } else if (!agent.present) {
      out.push({
        ...base,
        state: 'unmanaged',
        detail: `loaded without a plist in ~/Library/LaunchAgents (${shown})`,
      });
    } else if (agent.lastExitStatus !== null && agent.lastExitStatus !== 0) {
      out.push({ ...base, state: 'stale', detail: `loaded; ${shown}` });
    } else {
      out.push({ ...base, state: 'current', detail: `loaded; ${shown}` });
    }
  }
  return out;
}

/** The supervisor's probers a host is asked for: those of its fleet.yaml `supervisor`. */
export function supervisorProbersFor(
  probers: readonly ProberRuntime[],
  desired: Pick<VersionDesired, 'supervisor'>,
): ProberRuntime[] {
  return probers.filter((p) => p.supervisor !== undefined && p.supervisor === desired.supervisor);
}

/**
 * The supervisor's items: each asked prober's facts evaluated by its operator half (kind
 * `supervisor`, layer `runtime`). A prober the node did not answer, could not run, or whose facts
 * could not be evaluated is one `error` item; the rest of the report stands. Pure.
 */
export function supervisorItems(
  host: string,
  answered: readonly SnapshotProbeResult[] | undefined,
  probers: readonly ProberRuntime[],
  desired: Pick<VersionDesired, 'canonicalVersion' | 'variables'>,
): VersionItem[] {
  return probers.flatMap((runtime): VersionItem[] => {
    const base = { layer: 'runtime' as const, kind: 'supervisor' as const, name: runtime.id };
    const got = answered?.find((p) => p.prober === runtime.id);
    if (!got) return [{ ...base, state: 'error', detail: 'the node did not answer this prober' }];
    if (got.state === 'error')
      return [{ ...base, state: 'error', detail: `${got.code}: ${got.message}` }];
    try {
      return runtime.prober
        .evaluate(got.facts, {
          host,
          variables: desired.variables ?? {},
          canonicalVersion: desired.canonicalVersion,
          parameters: {},
        })
        .map((item) => ({
          ...base,
          layer: item.layer,
          ...(item.path === undefined ? {} : { path: item.path }),
          state: item.state,
          ...(item.detail === undefined ? {} : { detail: item.detail }),
        }));
    } catch (error) {
      const failure = asFleetError(error);
      return [
        { ...base, state: 'error', detail: `could not evaluate its facts: ${failure.message}` },
      ];
    }
  });
}

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

/** The versions request for a host: its tools, and its supervisor's probers when there are any. */
export function versionsRequestFor(
  desired: VersionDesired,
  probers: readonly ProberRuntime[],
): VersionsRequest {
  const asked = supervisorProbersFor(probers, desired);
  return {
    tools: [...new Set(desired.tools)],
    ...(asked.length === 0 ? {} : { probes: asked.map((p) => ({ prober: p.id, parameters: {} })) }),
  };
}

/** Whether a node refused the request only because it predates `probes` (protocol 2, additive). */
export function refusedProbesKey(error: unknown): boolean {
  return (
    isFleetError(error) &&
    error.code === 'BAD_REQUEST' &&
    /\bprobes\b/.test(error.message) &&
    /unrecognized key/i.test(error.message)
  );
}

/**
 * The versions transport of one controller client: one `POST /v1/versions` carrying the probes.
 * A node that predates `probes` refuses the key; it is asked again without them and each prober
 * through `POST /v1/probe` (open to `versions:read` for a supervisor's prober since protocol 2) —
 * two requests for an old node, one for a current one.
 */
export function readVersionsThrough(
  client: Pick<ControllerClient, 'versions' | 'probe'>,
): (request: VersionsRequest) => Promise<VersionsResponse> {
  return async (request) => {
    try {
      return await client.versions(request);
    } catch (error) {
      if (request.probes === undefined || !refusedProbesKey(error)) throw error;
    }
    const { probes, ...withoutProbes } = request;
    const answer = await client.versions(withoutProbes);
    const answered: SnapshotProbeResult[] = [];
    for (const probe of probes) {
      try {
        const got = await client.probe(probe);
        answered.push({ ...got, state: 'ok' });
      } catch (error) {
        const failure = asFleetError(error);
        answered.push({
          prober: probe.prober,
          state: 'error',
          code: failure.code,
          message: failure.message,
        });
      }
    }
    return { ...answer, probes: answered };
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
