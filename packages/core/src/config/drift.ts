/**
 * `fleet drift` (SPEC §8.1), operator side: reads every canonical file's history once for the
 * whole fleet (two git processes), builds the history indexes once, then asks every host —
 * concurrently, bounded, one request per host — for its live files and classifies them. A host
 * that cannot be reached is reported `unreachable` and the run goes on.
 *
 * The transport is a parameter (`readLive`), so the engine is tested without a network and the
 * CLI passes the controller client.
 */
import type { FleetErrorLike } from '../errors.js';
import type { Git } from '../git.js';
import { readCanonicalSnapshot, type CanonicalSnapshot } from '../classify/history.js';
import type { HistoryIndex } from '../classify/history-index.js';
import { forEachHost, type HostOutcome } from '../client/for-each-host.js';
import { hostEntry, hostVariables, type FleetRepo } from '../repo/load.js';
import {
  buildDriftReport,
  hostStatus,
  type DriftHost,
  type DriftReport,
} from '../report/drift-report.js';
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
export type ReadLive = (host: string, targets: readonly FileTarget[]) => Promise<ReadonlyMap<string, LiveFile>>;

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
  readonly onHost?: (host: string, status: DriftHost['status']) => void;
}

const UNREACHABLE_CODES = new Set(['HOST_UNREACHABLE', 'REQUEST_TIMEOUT']);

function failedHost(host: string, error: FleetErrorLike): DriftHost {
  const unreachable = UNREACHABLE_CODES.has(error.code);
  return {
    host,
    status: unreachable ? 'unreachable' : 'error',
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
  readonly readLive: ReadLive;
}

/** Reads every used canonical file's history (two git processes) and indexes it. */
export async function prepareAssessment(
  input: Pick<DriftInput, 'repo' | 'git' | 'domains' | 'domainFilter' | 'readLive'>,
): Promise<Assessment> {
  const used = [...input.domains.values()].filter(
    (runtime) => !input.domainFilter || input.domainFilter.includes(runtime.declaration.domain),
  );
  const snapshot = await readCanonicalSnapshot(input.git, canonicalPaths(used), 'HEAD');
  return {
    repo: input.repo,
    domains: input.domains,
    domainFilter: input.domainFilter,
    snapshot,
    indexes: buildHistoryIndexes(used, snapshot),
    readLive: input.readLive,
  };
}

export interface AssessedFile {
  readonly target: FileTarget;
  readonly assessment: FileAssessment;
}

/** One host's files, asked of the node in one request and classified. */
export async function assessHost(assessment: Assessment, host: string): Promise<AssessedFile[]> {
  const variables = hostVariables(assessment.repo, host);
  const domains = hostEntry(assessment.repo, host)
    .domains.filter((name) => !assessment.domainFilter || assessment.domainFilter.includes(name))
    .flatMap((name) => {
      const runtime = assessment.domains.get(name);
      return runtime ? [runtime] : [];
    });
  const targets = targetsForHost(host, variables, domains, assessment.snapshot);
  const live = targets.length === 0 ? new Map<string, LiveFile>() : await assessment.readLive(host, targets);
  return targets.map((target) => {
    const runtime = assessment.domains.get(target.domain) as DomainRuntime;
    const index = assessment.indexes.get(targetKey(target.domain, target.file.id));
    if (!index) throw new Error(`no history index for ${target.domain}/${target.file.id}`);
    const observed = live.get(target.path) ?? {
      kind: 'refused' as const,
      code: 'INTERNAL',
      message: 'the node did not report this file',
    };
    return { target, assessment: assessFile({ target, live: observed, operator: runtime.operator, index, variables }) };
  });
}

export async function runDrift(input: DriftInput): Promise<DriftReport> {
  const hosts = input.hosts ?? Object.keys(input.repo.manifest.hosts).sort();
  for (const host of hosts) hostEntry(input.repo, host); // UNKNOWN_HOST before any work
  const assessment = await prepareAssessment(input);
  const outcomes: HostOutcome<DriftHost>[] = await forEachHost(
    hosts,
    async (host) => {
      const items = (await assessHost(assessment, host)).map((file) => file.assessment.item);
      return { host, status: hostStatus(items), items };
    },
    {
      ...(input.concurrency === undefined ? {} : { concurrency: input.concurrency }),
      onSettled: (outcome) =>
        input.onHost?.(outcome.host, outcome.ok ? outcome.value.status : failedHost(outcome.host, outcome.error).status),
    },
  );
  return buildDriftReport({
    generatedAt: input.now(),
    repoCommit: assessment.snapshot.commit,
    canonicalVersion: input.repo.manifest.canonicalVersion,
    hosts: outcomes.map((outcome) => (outcome.ok ? outcome.value : failedHost(outcome.host, outcome.error))),
  });
}
