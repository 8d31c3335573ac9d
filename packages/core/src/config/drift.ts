/**
 * `fleet drift` (contract §8.1), operator side: reads every canonical file's history once for the
 * whole fleet (two git processes), builds the history indexes once, then asks every host —
 * concurrently, bounded, one request per host — for its live files and classifies them. A host
 * that cannot be reached is reported `unreachable` and the run goes on.
 *
 * The transport is a parameter (`readLive`), so the engine is tested without a network and the
 * CLI passes the controller client.
 */
import { asFleetError } from '../client/for-each-host.js';
import type { FleetErrorLike } from '../errors.js';
import type { DriftItem, DriftLayer, JsonObject, JsonValue } from '../interfaces/drift.js';
import type { Prober } from '../interfaces/prober.js';
import type { Registry } from '../registry/registry.js';
import type { Git } from '../git.js';
import { readCanonicalSnapshot, type CanonicalSnapshot } from '../classify/history.js';
import { readCanonicalSnapshotCached } from '../classify/history-cache.js';
import { blobId, cacheDirOf, readCacheFile, writeCacheFile } from '../cache/store.js';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import type { HistoryIndex } from '../classify/history-index.js';
import { forEachHost, type HostOutcome } from '../client/for-each-host.js';
import {
  HOSTS_DIR,
  cachedHostVariablesOf,
  hostEntry,
  hostVariables,
  parseHostVariables,
  type FleetRepo,
} from '../repo/load.js';
import {
  buildDriftReport,
  failedHostStatus,
  hostStatus,
  type DriftHost,
  type DriftReport,
  type DriftReportItem,
} from '../report/drift-report.js';
import type { RepoSource } from '../repo/at-commit.js';
import { probeParameters } from './parameters.js';
import { runtimeJournalProblem } from './runtime-journal.js';
import type { RuntimeSummary } from '../wire/summary.js';
import { assessFile, type FileAssessment, type LiveFile } from './file-items.js';
import {
  buildHistoryIndexes,
  canonicalPaths,
  targetKey,
  targetsForHost,
  type DomainRuntime,
  type FileTarget,
} from './targets.js';

/** What the engine asks of one host: its live files (redacted), with their backups. */
export type ReadLive = (
  host: string,
  targets: readonly FileTarget[],
) => Promise<ReadonlyMap<string, LiveFile>>;

/**
 * A prober loaded on the operator side (its `evaluate` half is what runs here): a domain's, or a
 * supervisor's (`supervisor`: asked only of hosts whose fleet.yaml entry names that supervisor).
 */
export interface ProberRuntime {
  readonly id: string;
  readonly layer: DriftLayer;
  readonly domain?: string;
  readonly supervisor?: string;
  readonly prober: Pick<Prober, 'evaluate'>;
}

/** One prober the node is asked to run, with its parameters for that host. */
export interface ProbeCall {
  readonly prober: string;
  /** The domain the prober belongs to: a node lacking it answers `DOMAIN_NOT_SERVED`. */
  readonly domain?: string;
  readonly parameters: JsonObject;
}

/** What the node answered for one prober: its facts (redacted), or why it could not run. */
export type ProbeAnswer =
  | { readonly prober: string; readonly state: 'ok'; readonly facts: JsonValue }
  | {
      readonly prober: string;
      readonly state: 'error';
      readonly code: string;
      readonly message: string;
    };

/**
 * The live files and the probers' answers of one host, in ONE request (contract §14: one request per
 * host per verb): the transport the drift engine uses when it runs probers.
 */
export type ReadSnapshot = (
  host: string,
  targets: readonly FileTarget[],
  probes: readonly ProbeCall[],
  options?: { readonly runtime?: boolean },
) => Promise<{
  readonly files: ReadonlyMap<string, LiveFile>;
  readonly probes: readonly ProbeAnswer[];
  /**
   * The runtime journal summary, when `options.runtime` asked and the node answered it in the same
   * request; absent when it did not (an older node): drift then asks `readRuntimeSummary`.
   */
  readonly runtime?: RuntimeSummary;
}>;

export interface DriftInput {
  readonly repo: FleetRepo;
  readonly git: Git;
  /** Domains with their installers, by name. */
  readonly domains: ReadonlyMap<string, DomainRuntime>;
  readonly readLive: ReadLive;
  /** Hosts to inspect (default: every host in fleet.yaml). */
  readonly hosts?: readonly string[];
  /** Domains to inspect (default: every domain each host runs). */
  readonly domainFilter?: readonly string[];
  readonly concurrency?: number;
  readonly now: () => Date;
  /** Called as each host settles, with its entry of the report (streamed output, progress). */
  readonly onHost?: (host: string, status: DriftHost['status'], entry: DriftHost) => void;
  /**
   * The domains' probers (derived and runtime layers). With `readSnapshot`, each host's probers of
   * its domains run in the same request as its files and their items join the file items.
   */
  readonly probers?: readonly ProberRuntime[];
  readonly readSnapshot?: ReadSnapshot;
  /**
   * The host's runtime journal summary, unless `domainFilter` narrows the run to domains: a
   * transaction open or needing recovery is one `runtime` item of no domain, `stale`, with the
   * reason (issue 36). With `readSnapshot` it rides in the host's one snapshot request (contract
   * §14); this separate read (`GET /v1/summary`) is made only when the snapshot did not carry it —
   * a host with no files, a node that predates the field. A failed read is no word.
   */
  readonly readRuntimeSummary?: (host: string) => Promise<RuntimeSummary | null>;
  /** Where fleet.yaml and hosts/ were read (`loadRepoAtHead`); the history is read there too. */
  readonly source?: RepoSource;
}

function failedHost(host: string, error: FleetErrorLike): DriftHost {
  return {
    host,
    status: failedHostStatus(error),
    detail: `${error.code}: ${error.message}`,
    items: [],
  };
}

/** What assessing any number of hosts shares: the history, read and indexed once. */
export interface Assessment {
  readonly repo: FleetRepo;
  readonly domains: ReadonlyMap<string, DomainRuntime>;
  readonly domainFilter: readonly string[] | undefined;
  readonly snapshot: CanonicalSnapshot;
  readonly indexes: ReadonlyMap<string, HistoryIndex>;
  /** Paths of fleet.yaml, hosts/ and domains/ with uncommitted changes (not used, warned about). */
  readonly uncommitted?: readonly string[];
  /** Each host's earlier variable sets (its `hosts/<host>.yaml` as it was), for published views. */
  readonly earlierVariables: ReadonlyMap<string, readonly Readonly<Record<string, string>>[]>;
  readonly readLive: ReadLive;
  /**
   * The domains' probers and the transport that runs them with the files: a plan then classifies
   * its domain's derived layer too (contract §8.3: a hand fix in the router's volume is refused).
   */
  readonly probes?: {
    readonly probers: readonly ProberRuntime[];
    readonly readSnapshot: ReadSnapshot;
  };
}

const HOST_VERSIONS_CACHE_FILE = 'host-versions-v1.json';
const HOST_VERSIONS_CACHE_FORMAT = 'fleet.host-versions-cache/v1';
/** Earlier host files, by blob id: their variables, or `null` for one that never validated. */
const hostVersionsCacheSchema = z.lazy(() =>
  z.record(z.string(), z.record(z.string(), z.string()).nullable()),
);

/**
 * Each host's variables as they were in the repo's history, other than the current ones: a
 * version of a canonical file was published for a host rendered with the host's variables of
 * the time (a node-id change must leave the old id's rendering published, not local). Every
 * version's parse is kept by blob id in `.git/fleet-cache` (content-addressed, so never stale):
 * a fleet of 1,000 hosts would otherwise parse 1,000 YAML files per drift.
 */
function earlierHostVariables(
  repo: FleetRepo,
  history: CanonicalSnapshot['history'],
): Map<string, Readonly<Record<string, string>>[]> {
  const earlier = new Map<string, Readonly<Record<string, string>>[]>();
  const atHead = cachedHostVariablesOf(repo.root);
  const cacheDir = cacheDirOf(repo.root);
  const read =
    cacheDir === null
      ? undefined
      : hostVersionsCacheSchema.safeParse(
          readCacheFile(cacheDir, HOST_VERSIONS_CACHE_FILE, HOST_VERSIONS_CACHE_FORMAT),
        );
  const known: Record<string, Readonly<Record<string, string>> | null> = read?.success
    ? read.data
    : {};
  const seen: Record<string, Readonly<Record<string, string>> | null> = {};
  let parsed = false;
  for (const host of Object.keys(repo.manifest.hosts)) {
    const versions = history.get(`${HOSTS_DIR}/${host}.yaml`) ?? [];
    if (versions.length === 0) continue;
    const current = JSON.stringify(hostVariables(repo, host));
    const sets = new Map<string, Readonly<Record<string, string>>>();
    for (const version of versions) {
      const blob = blobId(Buffer.from(version.content, 'utf8'));
      let variables = atHead(version.content) ?? known[blob];
      if (variables === undefined) {
        parsed = true;
        try {
          variables = parseHostVariables(version.content, `${HOSTS_DIR}/${host}.yaml`);
        } catch {
          variables = null; // A version that never validated was never rendered for the host.
        }
      }
      seen[blob] = variables;
      if (variables === null) continue;
      const key = JSON.stringify(variables);
      if (key !== current && !sets.has(key)) sets.set(key, variables);
    }
    if (sets.size > 0) earlier.set(host, [...sets.values()]);
  }
  // Rewritten only when something was parsed; it keeps the versions this history holds.
  if (parsed && cacheDir !== null) {
    writeCacheFile(cacheDir, HOST_VERSIONS_CACHE_FILE, HOST_VERSIONS_CACHE_FORMAT, seen);
  }
  return earlier;
}

/**
 * Reads every used canonical file's history (two git processes, or none when `.git/fleet-cache`
 * holds the commit's: `classify/history-cache.ts`) and indexes it, at `commit` — the commit
 * fleet.yaml and hosts/ were read at (`loadRepoAtHead`: one source of truth), else HEAD. The
 * indexes are built on first use: a drift whose files are all current never builds one.
 */
export async function prepareAssessment(
  input: Pick<
    DriftInput,
    'repo' | 'git' | 'domains' | 'domainFilter' | 'readLive' | 'probers' | 'readSnapshot'
  > & {
    /** Where the repo was read (`loadRepoAtHead`): the commit, and what is left uncommitted. */
    readonly source?: RepoSource;
  },
): Promise<Assessment> {
  const used = [...input.domains.values()].filter(
    (runtime) => !input.domainFilter || input.domainFilter.includes(runtime.declaration.domain),
  );
  const paths = canonicalPaths(used);
  // Read at a resolved commit, the snapshot is the commit's for good: kept in .git/fleet-cache.
  const snapshot = input.source
    ? await readCanonicalSnapshotCached(input.git, cacheDirOf(input.repo.root), {
        commit: input.source.commit,
        paths,
        directories: [HOSTS_DIR],
      })
    : await readCanonicalSnapshot(input.git, paths, 'HEAD', [HOSTS_DIR]);
  return {
    repo: input.repo,
    domains: input.domains,
    domainFilter: input.domainFilter,
    snapshot,
    indexes: buildHistoryIndexes(used, snapshot),
    earlierVariables: earlierHostVariables(input.repo, snapshot.history),
    ...(input.source ? { uncommitted: input.source.uncommitted } : {}),
    readLive: input.readLive,
    ...(input.probers !== undefined && input.readSnapshot !== undefined
      ? { probes: { probers: input.probers, readSnapshot: input.readSnapshot } }
      : {}),
  };
}

export interface AssessedFile {
  readonly target: FileTarget;
  readonly assessment: FileAssessment;
}

/** The domains of a host the assessment covers, and the host's variables. */
function hostScope(assessment: Assessment, host: string) {
  const variables = hostVariables(assessment.repo, host);
  const domains = hostEntry(assessment.repo, host)
    .domains.filter((name) => !assessment.domainFilter || assessment.domainFilter.includes(name))
    .flatMap((name) => {
      const runtime = assessment.domains.get(name);
      return runtime ? [runtime] : [];
    });
  return {
    variables,
    domains,
    targets: targetsForHost(host, variables, domains, assessment.snapshot),
  };
}

/** One host's files, asked of the node in one request and classified. */
export async function assessHost(assessment: Assessment, host: string): Promise<AssessedFile[]> {
  const { variables, targets } = hostScope(assessment, host);
  const live =
    targets.length === 0 ? new Map<string, LiveFile>() : await assessment.readLive(host, targets);
  return classifyTargets(assessment, host, targets, live, variables);
}

function classifyTargets(
  assessment: Assessment,
  host: string,
  targets: readonly FileTarget[],
  live: ReadonlyMap<string, LiveFile>,
  variables: Readonly<Record<string, string>>,
): AssessedFile[] {
  return targets.map((target) => {
    const runtime = assessment.domains.get(target.domain) as DomainRuntime;
    const index = assessment.indexes.get(targetKey(target.domain, target.file.id));
    if (!index) throw new Error(`no history index for ${target.domain}/${target.file.id}`);
    const observed = live.get(target.path) ?? {
      kind: 'refused' as const,
      code: 'INTERNAL',
      message: 'the node did not report this file',
    };
    const earlierVariables = assessment.earlierVariables.get(host) ?? [];
    return {
      target,
      assessment: assessFile({
        target,
        live: observed,
        operator: runtime.operator,
        index,
        variables,
        earlierVariables,
        repoCommit: assessment.snapshot.commit,
      }),
    };
  });
}

/** A prober's item as a report item (the domain filled in, nothing else added). */
function reportItem(item: DriftItem, domain: string | undefined): DriftReportItem {
  const itemDomain = item.domain ?? domain;
  return {
    layer: item.layer,
    ...(itemDomain === undefined ? {} : { domain: itemDomain }),
    ...(item.path === undefined ? {} : { path: item.path }),
    state: item.state,
    ...(item.localLines === undefined ? {} : { localLines: item.localLines }),
    ...(item.detail === undefined ? {} : { detail: item.detail }),
    ...(item.diff === undefined ? {} : { diff: item.diff }),
  };
}

/**
 * One host's files and the probers of its domains, in one request: the file items classified as
 * {@link assessHost} does, then each prober's items (`derived`, `runtime` layers). A prober that
 * could not run, or whose facts could not be evaluated, is one `error` item: the rest stands.
 */
export async function assessHostWithProbes(
  assessment: Assessment,
  host: string,
  probers: readonly ProberRuntime[],
  readSnapshot: ReadSnapshot,
): Promise<DriftReportItem[]> {
  return (await assessHostSnapshot(assessment, host, probers, readSnapshot, false)).items;
}

/**
 * {@link assessHostWithProbes}, the files with their targets (what a plan is built from) and the
 * probers' items apart.
 */
export async function assessFilesAndProbes(
  assessment: Assessment,
  host: string,
  probers: readonly ProberRuntime[],
  readSnapshot: ReadSnapshot,
): Promise<{ files: AssessedFile[]; items: DriftReportItem[] }> {
  const { files, probed } = await assessHostSnapshot(
    assessment,
    host,
    probers,
    readSnapshot,
    false,
  );
  return { files, items: probed };
}

/**
 * {@link assessHostWithProbes}, asking the runtime journal summary in the same request when
 * `runtime` is set. `runtime` in the result is absent when no request was made (a host with no
 * files) or the node did not carry it. `items` are every item, `probed` the probers' alone.
 */
async function assessHostSnapshot(
  assessment: Assessment,
  host: string,
  probers: readonly ProberRuntime[],
  readSnapshot: ReadSnapshot,
  withRuntime: boolean,
): Promise<{
  files: AssessedFile[];
  items: DriftReportItem[];
  probed: DriftReportItem[];
  runtime?: RuntimeSummary;
}> {
  const { variables, domains, targets } = hostScope(assessment, host);
  const items: DriftReportItem[] = [];
  const calls = proberCalls(assessment, host, probers, domains, variables, items);
  if (targets.length === 0) return { files: [], items, probed: items };
  const answer =
    calls.length === 0 && !withRuntime
      ? { files: await assessment.readLive(host, targets), probes: [] as ProbeAnswer[] }
      : await readSnapshot(
          host,
          targets,
          calls.map((c) => c.call),
          withRuntime ? { runtime: true } : undefined,
        );
  const files = classifyTargets(assessment, host, targets, answer.files, variables);
  evaluateProbes(assessment, host, variables, calls, answer.probes, items);
  return {
    files,
    items: [...files.map((file) => file.assessment.item), ...items],
    probed: items,
    ...(answer.runtime === undefined ? {} : { runtime: answer.runtime }),
  };
}

/** A prober to ask the node, with the call that asks it. */
interface ProberCall {
  readonly runtime: ProberRuntime;
  readonly call: ProbeCall;
}

/**
 * The calls of the probers that apply to the host: its supervisor's, and those of its domains.
 * A prober whose parameters cannot be computed is an `error` item in `items` instead.
 */
function proberCalls(
  assessment: Assessment,
  host: string,
  probers: readonly ProberRuntime[],
  domains: readonly DomainRuntime[],
  variables: Readonly<Record<string, string>>,
  items: DriftReportItem[],
): ProberCall[] {
  const calls: ProberCall[] = [];
  for (const runtime of probers) {
    if (runtime.supervisor !== undefined) {
      // The supervisor's prober (contract §12): a stopped, disabled or stale controller unit.
      if (runtime.supervisor !== hostEntry(assessment.repo, host).supervisor) continue;
      calls.push({ runtime, call: { prober: runtime.id, parameters: {} } });
      continue;
    }
    const domain = domains.find((d) => d.declaration.domain === runtime.domain);
    if (!domain) continue;
    try {
      calls.push({
        runtime,
        call: {
          prober: runtime.id,
          domain: domain.declaration.domain,
          parameters: probeParameters(domain.declaration, variables, host),
        },
      });
    } catch (error) {
      const failure = asFleetError(error);
      items.push({
        layer: runtime.layer,
        domain: runtime.domain,
        state: 'error',
        detail: `${runtime.id}: ${failure.code}: ${failure.message}`,
      });
    }
  }
  return calls;
}

/** Each prober's answer evaluated into `items`; one it did not answer or could not evaluate is an `error` item. */
function evaluateProbes(
  assessment: Assessment,
  host: string,
  variables: Readonly<Record<string, string>>,
  calls: readonly ProberCall[],
  probes: readonly ProbeAnswer[],
  items: DriftReportItem[],
): void {
  for (const { runtime, call } of calls) {
    const base = {
      layer: runtime.layer,
      ...(runtime.domain === undefined ? {} : { domain: runtime.domain }),
    } as const;
    const got = probes.find((p) => p.prober === runtime.id);
    if (!got) {
      items.push({
        ...base,
        state: 'error',
        detail: `${runtime.id}: the node did not answer this prober`,
      });
    } else if (got.state === 'error') {
      items.push({ ...base, state: 'error', detail: `${runtime.id}: ${got.code}: ${got.message}` });
    } else {
      try {
        const evaluated = runtime.prober.evaluate(got.facts, {
          host,
          variables,
          canonicalVersion: assessment.repo.manifest.canonicalVersion,
          parameters: call.parameters,
        });
        items.push(...evaluated.map((item) => reportItem(item, runtime.domain)));
      } catch (error) {
        const failure = asFleetError(error);
        items.push({
          ...base,
          state: 'error',
          detail: `${runtime.id}: could not evaluate its facts: ${failure.message}`,
        });
      }
    }
  }
}

export async function runDrift(input: DriftInput): Promise<DriftReport> {
  const hosts = input.hosts ?? Object.keys(input.repo.manifest.hosts).sort();
  for (const host of hosts) hostEntry(input.repo, host); // UNKNOWN_HOST before any work
  // The installers' checks run here too: a canonical install would refuse is an error in drift.
  const assessment = await prepareAssessment(input);
  const outcomes: HostOutcome<DriftHost>[] = await forEachHost(
    hosts,
    async (host) => {
      const readSummary = input.domainFilter ? undefined : input.readRuntimeSummary;
      const probers = input.probers ?? [];
      const read =
        input.readSnapshot && (probers.length > 0 || readSummary)
          ? await assessHostSnapshot(
              assessment,
              host,
              probers,
              input.readSnapshot,
              readSummary !== undefined,
            )
          : { items: (await assessHost(assessment, host)).map((file) => file.assessment.item) };
      const { items } = read;
      const journal =
        'runtime' in read && read.runtime !== undefined
          ? read.runtime
          : readSummary
            ? await readSummary(host).catch(() => null)
            : null;
      const problem = runtimeJournalProblem(host, journal);
      if (problem !== null) items.push({ layer: 'runtime', state: 'stale', detail: problem });
      return { host, status: hostStatus(items), items };
    },
    {
      ...(input.concurrency === undefined ? {} : { concurrency: input.concurrency }),
      onSettled: (outcome) => {
        const entry = outcome.ok ? outcome.value : failedHost(outcome.host, outcome.error);
        input.onHost?.(outcome.host, entry.status, entry);
      },
    },
  );
  return buildDriftReport({
    generatedAt: input.now(),
    repoCommit: assessment.snapshot.commit,
    ...(assessment.uncommitted ? { uncommitted: assessment.uncommitted } : {}),
    canonicalVersion: input.repo.manifest.canonicalVersion,
    hosts: outcomes.map((outcome) =>
      outcome.ok ? outcome.value : failedHost(outcome.host, outcome.error),
    ),
  });
}

/**
 * The implemented probers of the given domains, loaded (their operator half evaluates the facts).
 * A supervisor's probers come from {@link loadSupervisorProbers}. A prober whose plugin declares it
 * without an implementation is skipped.
 */
export async function loadDomainProbers(
  registry: Pick<Registry, 'probers' | 'prober'>,
  domains: readonly string[],
): Promise<ProberRuntime[]> {
  const out: ProberRuntime[] = [];
  for (const { descriptor } of registry.probers()) {
    if (descriptor.domain === undefined || !domains.includes(descriptor.domain)) continue;
    if (descriptor.load === undefined) continue;
    out.push({
      id: descriptor.id,
      layer: descriptor.layer,
      domain: descriptor.domain,
      prober: await registry.prober(descriptor.id),
    });
  }
  return out;
}

/**
 * The runtime probers of every supervisor's plugin (a prober of no domain registered by the
 * plugin that registers the bootstrap adapter): `systemd-user.unit`, `windows-task.task`. Drift
 * asks each host for its own supervisor's (contract §12: supervision drift is a `runtime` item).
 */
export async function loadSupervisorProbers(
  registry: Pick<Registry, 'probers' | 'prober' | 'bootstrapAdapters'>,
): Promise<ProberRuntime[]> {
  const out: ProberRuntime[] = [];
  const probers = registry.probers();
  for (const adapter of registry.bootstrapAdapters()) {
    for (const { plugin, descriptor } of probers) {
      if (plugin.name !== adapter.plugin.name || descriptor.domain !== undefined) continue;
      if (descriptor.layer !== 'runtime' || descriptor.load === undefined) continue;
      out.push({
        id: descriptor.id,
        layer: descriptor.layer,
        supervisor: adapter.descriptor.supervisor,
        prober: await registry.prober(descriptor.id),
      });
    }
  }
  return out;
}
