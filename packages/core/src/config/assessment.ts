/**
 * The drift assessment (contract §8.1, §14), operator side: every used canonical file's history
 * read and indexed once for any number of hosts (`prepareAssessment`), then each host's files
 * asked of its node in one request — with its probers when they run — and classified
 * (`file-items.ts`). Drift (drift.ts), plans (plan.ts) and installs build on it, so they agree.
 */
import { readCanonicalSnapshot, type CanonicalSnapshot } from '../classify/history.js';
import { readCanonicalSnapshotCached } from '../classify/history-cache.js';
import type { HistoryIndex } from '../classify/history-index.js';
import { cacheDirOf } from '../cache/store.js';
import { HOSTS_DIR, hostEntry, hostVariables, type FleetRepo } from '../repo/load.js';
import type { RepoSource } from '../repo/at-commit.js';
import type { DriftReportItem } from '../report/drift-report.js';
import type { RuntimeSummary } from '../wire/summary.js';
import type {
  DriftInput,
  ProbeAnswer,
  ProberRuntime,
  ReadLive,
  ReadSnapshot,
} from './drift-inputs.js';
import { evaluateProbes, proberCalls } from './drift-probers.js';
import { assessFile, type FileAssessment, type LiveFile } from './file-items.js';
import { earlierHostVariables } from './host-versions.js';
import type { DomainRuntime } from './domain-runtime.js';
import { targetKey, type FileTarget } from './file-target.js';
import { buildHistoryIndexes, canonicalPaths, targetsForHost } from './targets.js';

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
export async function assessHostSnapshot(
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
  const calls = proberCalls(assessment.repo, host, probers, domains, variables, items);
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
  evaluateProbes(assessment.repo, host, variables, calls, answer.probes, items);
  return {
    files,
    items: [...files.map((file) => file.assessment.item), ...items],
    probed: items,
    ...(answer.runtime === undefined ? {} : { runtime: answer.runtime }),
  };
}
