/**
 * `fleet status` (contract §7), pure: one screen for the whole fleet, assembled from one
 * `GET /v1/summary` per host, the repository's newest drift report and the harness reconcile's
 * memory of offline hosts. Per host: reachability, the runtime against `canonicalVersion` (the
 * same judgement as `fleet version`), the last drift report's state and age, `offline_pending`,
 * and a runtime transaction in progress or needing recovery. Nothing here does I/O.
 *
 * A host's state is `denied` (its credentials were refused), `unreachable`, `error` (it answered
 * with another failure), `attention` (it answered, and something above needs a look — each reason
 * one line) or `ok`. The exit code takes the most urgent across hosts: 4 over 5 over 1, else 0.
 */
import { ExitCode, mostUrgentExit, type FleetErrorLike } from '../errors.js';
import { runtimeItem } from '../config/version.js';
import type { DriftReport, HostStatus } from '../report/drift-report.js';
import type { FleetManifest } from '../repo/schema.js';
import type { NodeSummaryResponse, RuntimeSummary } from '../wire/summary.js';

export const STATUS_SCHEMA = 'fleet.status/v1';

export type StatusHostState = 'ok' | 'attention' | 'unreachable' | 'denied' | 'error';

export interface StatusHost {
  readonly host: string;
  readonly state: StatusHostState;
  readonly reachable: boolean;
  /** Why the host could not be read (`null` when it answered). */
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly runtime: {
    readonly package: string;
    readonly version: string;
    readonly build: { readonly sha256: string | null; readonly commit: string | null };
    /** Against `canonicalVersion` (and the canonical artifact's build), as `fleet version` says. */
    readonly state: 'current' | 'stale' | 'diverged' | 'error';
    readonly detail: string;
    readonly health: 'ok' | 'degraded';
  } | null;
  /** This host in the newest drift report (`state: null`: no report, or not in it). */
  readonly drift: {
    readonly state: HostStatus | null;
    readonly generatedAt: string | null;
    readonly ageSeconds: number | null;
  };
  /** From the harness reconcile's state: unreachable since `since`, still to be healed. */
  readonly offlinePending: { readonly since: string; readonly lastSeen: string } | null;
  /** The node's runtime journal, summarised (`null` when the host did not answer). */
  readonly transaction:
    (RuntimeSummary['transaction'] & { readonly attention: RuntimeSummary['attention'] }) | null;
  /** One line per thing to look at. */
  readonly attention: readonly string[];
}

export interface StatusReport {
  readonly schema: typeof STATUS_SCHEMA;
  readonly generatedAt: string;
  readonly repoCommit: string | null;
  readonly canonicalVersion: string;
  readonly drift: {
    /** Repo-relative path of the newest drift report, `null` when there is none. */
    readonly report: string | null;
    readonly generatedAt: string | null;
    /** Why the newest report could not be used. */
    readonly problem: string | null;
  };
  readonly reconcile: { readonly lastRun: string | null; readonly problem: string | null };
  readonly summary: Readonly<Record<StatusHostState, number>> & { readonly hosts: number };
  readonly hosts: readonly StatusHost[];
}

/** A check of `GET /v1/health` that is not ok: what makes the node degraded, and why. */
export interface FailingHealthCheck {
  readonly name: string;
  readonly detail: string;
}

export type SummaryOutcome =
  | {
      readonly ok: true;
      readonly value: NodeSummaryResponse;
      /** For a degraded node, its failing health checks (absent: not asked, or not answered). */
      readonly failing?: readonly FailingHealthCheck[];
    }
  | { readonly ok: false; readonly error: FleetErrorLike };

export interface StatusInput {
  readonly manifest: Pick<FleetManifest, 'canonicalVersion' | 'artifacts'>;
  readonly repoCommit: string | null;
  readonly now: Date;
  /** Per host, in the order to report. */
  readonly hosts: readonly { readonly host: string; readonly outcome: SummaryOutcome }[];
  readonly drift:
    | { readonly path: string; readonly report: DriftReport }
    | { readonly path: string; readonly problem: string }
    | null;
  readonly reconcile:
    | {
        readonly lastRun: string;
        readonly pending: ReadonlyMap<
          string,
          { readonly first_seen: string; readonly last_seen: string }
        >;
      }
    | { readonly problem: string }
    | null;
}

const age = (now: Date, at: string): number | null => {
  const t = Date.parse(at);
  return Number.isNaN(t) ? null : Math.max(0, Math.round((now.getTime() - t) / 1000));
};

/** `3d`, `5h`, `12m`, `40s`: an age for one screen. */
export function formatAge(seconds: number): string {
  if (seconds >= 86_400) return `${Math.floor(seconds / 86_400)}d`;
  if (seconds >= 3_600) return `${Math.floor(seconds / 3_600)}h`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)}m`;
  return `${seconds}s`;
}

function hostStatus(input: StatusInput, host: string, outcome: SummaryOutcome): StatusHost {
  const drift = driftOf(input, host);
  const pending =
    input.reconcile !== null && 'pending' in input.reconcile
      ? input.reconcile.pending.get(host)
      : undefined;
  const offlinePending = pending
    ? { since: pending.first_seen, lastSeen: pending.last_seen }
    : null;
  const attention: string[] = [];
  if (offlinePending)
    attention.push(`offline_pending since ${offlinePending.since} (harness reconcile)`);
  if (drift.state !== null && drift.state !== 'current') {
    attention.push(`${drift.state} in the last drift report (${drift.generatedAt ?? ''})`);
  }
  if (!outcome.ok) {
    const exit = outcome.error.exitCode;
    const state: StatusHostState =
      exit === ExitCode.auth ? 'denied' : exit === ExitCode.unreachable ? 'unreachable' : 'error';
    return {
      host,
      state,
      reachable: state !== 'unreachable',
      error: { code: outcome.error.code, message: outcome.error.message },
      runtime: null,
      drift,
      offlinePending,
      transaction: null,
      attention,
    };
  }
  const node = outcome.value;
  const runtime = runtimeOf(input, node);
  if (runtime.state !== 'current') {
    attention.push(`runtime ${node.version} is ${runtime.state}: ${runtime.detail}`);
  }
  nodeAttention(node, outcome.failing ?? [], attention);
  const txn = node.runtime.transaction;
  return {
    host,
    state: attention.length > 0 ? 'attention' : 'ok',
    reachable: true,
    error: null,
    runtime,
    drift,
    offlinePending,
    transaction: txn === null ? null : { ...txn, attention: node.runtime.attention },
    attention,
  };
}

/** The host's line of the last drift report, and how old that report is. */
function driftOf(input: StatusInput, host: string): StatusHost['drift'] {
  const report = input.drift !== null && 'report' in input.drift ? input.drift.report : null;
  const inReport = report?.hosts.find((entry) => entry.host === host);
  return {
    state: inReport?.status ?? null,
    generatedAt: report?.generatedAt ?? null,
    ageSeconds: report ? age(input.now, report.generatedAt) : null,
  };
}

/** The node's runtime against the canonical version and its artifact (contract §12). */
function runtimeOf(
  input: StatusInput,
  node: NodeSummaryResponse,
): NonNullable<StatusHost['runtime']> {
  const canonical = input.manifest.artifacts.find(
    (artifact) => artifact.version === input.manifest.canonicalVersion,
  );
  const item = runtimeItem(node, {
    canonicalVersion: input.manifest.canonicalVersion,
    artifact: canonical ? { sha256: canonical.sha256, commit: canonical.commit } : undefined,
  });
  return {
    package: node.package,
    version: node.version,
    build: node.build,
    state: item.state as NonNullable<StatusHost['runtime']>['state'],
    detail: item.detail ?? '',
    health: node.health,
  };
}

/** What needs a look on a reached node: its failing health checks, a runtime transaction. */
function nodeAttention(
  node: NodeSummaryResponse,
  failing: readonly FailingHealthCheck[],
  attention: string[],
): void {
  if (node.health !== 'ok') {
    if (failing.length === 0) attention.push('health degraded (fleet version shows the checks)');
    for (const check of failing) attention.push(`health degraded: ${check.name}: ${check.detail}`);
  }
  const txn = node.runtime.transaction;
  if (node.runtime.attention === 'in-progress') {
    attention.push(
      `runtime transaction ${txn?.id ?? ''} (${txn?.kind ?? ''}) in progress at "${txn?.lastStep ?? ''}"`,
    );
  } else if (node.runtime.attention === 'recovery-required') {
    attention.push(
      node.runtime.journal === 'corrupt'
        ? 'the runtime journal is corrupt: see fleet bootstrap status'
        : `runtime transaction ${txn?.id ?? ''} (${txn?.kind ?? ''}) needs recovery at "${txn?.lastStep ?? ''}": see fleet bootstrap status`,
    );
  }
}

export function assembleStatus(input: StatusInput): StatusReport {
  const hosts = input.hosts.map(({ host, outcome }) => hostStatus(input, host, outcome));
  const count = (state: StatusHostState) => hosts.filter((h) => h.state === state).length;
  const drift = input.drift;
  return {
    schema: STATUS_SCHEMA,
    generatedAt: input.now.toISOString(),
    repoCommit: input.repoCommit,
    canonicalVersion: input.manifest.canonicalVersion,
    drift: {
      report: drift?.path ?? null,
      generatedAt: drift !== null && 'report' in drift ? drift.report.generatedAt : null,
      problem: drift !== null && 'problem' in drift ? drift.problem : null,
    },
    reconcile: {
      lastRun:
        input.reconcile !== null && 'lastRun' in input.reconcile ? input.reconcile.lastRun : null,
      problem:
        input.reconcile !== null && 'problem' in input.reconcile ? input.reconcile.problem : null,
    },
    summary: {
      hosts: hosts.length,
      ok: count('ok'),
      attention: count('attention'),
      unreachable: count('unreachable'),
      denied: count('denied'),
      error: count('error'),
    },
    hosts,
  };
}

/**
 * The exit code of contract §7 across hosts, most urgent first: 4 when any host refused the
 * credentials, else 5 when any was unreachable, else 1 when any needs attention or failed, else 0.
 */
export function statusExitCode(states: readonly StatusHostState[]): number {
  return mostUrgentExit(states.map((state) => STATE_EXIT[state]));
}

const STATE_EXIT: Readonly<Record<StatusHostState, number>> = {
  ok: ExitCode.ok,
  attention: ExitCode.drift,
  error: ExitCode.drift,
  unreachable: ExitCode.unreachable,
  denied: ExitCode.auth,
};
