/**
 * What `fleet upgrade` takes and answers (contract §11; issue 36): one host's input, plan and
 * outcome, the fleet-wide document, and the pure readings of them (a failure's outcome, the
 * lines of a fleet-wide run and its document, the plain text). The I/O that produces them is
 * upgrade.ts, which re-exports all of this.
 */
import type { FleetErrorLike, FleetRepo, RuntimeStatusResponse } from '@fleet/core';
import { ExitCode, mostUrgentExit } from '@fleet/core';
import type { LoadedArtifact } from './artifact.js';

export interface UpgradeHostInput {
  readonly root: string;
  readonly host: string;
  readonly confirm: boolean;
  readonly acceptanceTimeoutMs: number;
  readonly timeoutMs: number;
  /** Close the host's interrupted transaction instead (`--resume`). */
  readonly resume?: boolean;
  /** Progress while the node works (stderr). */
  readonly onProgress?: (line: string) => void;
  /** A warning or a note for the operator (stderr). */
  readonly onNote?: (line: string) => void;
  /**
   * Read once by a fleet-wide run and shared by its hosts: the repository and the canonical
   * artifact (reading and checking a ~10 MB tarball per host would serialise the
   * hosts on the operator's one thread).
   */
  readonly shared?: { readonly repo: FleetRepo; readonly artifact: () => Promise<LoadedArtifact> };
}

export type UpgradeOutcome =
  'planned' | 'current' | 'accepted' | 'rolled-back' | 'manual-recovery-required' | 'failed';

export interface UpgradePlan {
  readonly host: string;
  readonly nodeId: string;
  readonly supervisor: string;
  readonly strategy: string;
  readonly from: { readonly version: string; readonly build: string | null };
  readonly to: {
    readonly version: string;
    readonly build: string;
    readonly commit: string | null;
    readonly file: string;
  };
}

export interface HostUpgraded extends UpgradePlan {
  readonly outcome: UpgradeOutcome;
  /** The human line: `node-01: 1.0.0 (…) -> 1.1.0 (…) under systemd-user`. */
  readonly describe: string;
  readonly confirmed?: boolean;
  readonly transaction?: string;
  readonly resumed?: boolean;
  readonly status?: RuntimeStatusResponse | null;
}

/** The note for a host that already runs the canonical build (the one-host verb exits 3). */
export function currentNote(upgraded: HostUpgraded): string {
  return `${upgraded.host} already runs ${upgraded.to.version} (${upgraded.to.build.slice(0, 12)}) and passes acceptance: nothing to upgrade (name a newer build as canonicalVersion and in artifacts in fleet.yaml)`;
}

export type FleetHostOutcome =
  UpgradeOutcome | 'runner-died' | 'unreachable' | 'denied' | 'error' | 'skipped';

export interface FleetUpgradeHost {
  readonly host: string;
  readonly outcome: FleetHostOutcome;
  readonly exitCode: number;
  readonly canary: boolean;
  readonly transaction?: string;
  readonly from?: UpgradePlan['from'];
  readonly to?: UpgradePlan['to'];
  readonly error?: {
    readonly code: string;
    readonly message: string;
    readonly suggestions?: readonly string[];
  };
}

export const FLEET_UPGRADE_SCHEMA = 'fleet.upgrade/v1';

/** `fleet upgrade --all --json` (issue 36): one document, every host's outcome. */
export interface FleetUpgradeDocument {
  readonly schema: typeof FLEET_UPGRADE_SCHEMA;
  readonly generatedAt: string;
  readonly confirmed: boolean;
  readonly canary: string | null;
  readonly concurrency: number;
  readonly summary: Readonly<Record<FleetHostOutcome | 'hosts', number>>;
  /** The host whose failure stopped the run, or `null`. */
  readonly stoppedAt: string | null;
  readonly hosts: readonly FleetUpgradeHost[];
  readonly exitCode: number;
}

export interface UpgradeFleetInput extends Omit<UpgradeHostInput, 'host' | 'resume'> {
  /** The hosts selected (`--host` repeated), or every host of fleet.yaml (`--all`). */
  readonly hosts: readonly string[] | 'all';
  readonly canary?: string;
  readonly concurrency: number;
  /** Each host's line as it settles (stdout). */
  readonly onHost?: (host: FleetUpgradeHost) => void;
  /** A host's progress (stderr), prefixed with its name by the caller. */
  readonly onHostProgress?: (host: string, line: string) => void;
}

/** A host's failure as its outcome (pure). */
export function failureOutcome(code: string, exitCode: number): FleetHostOutcome {
  switch (code) {
    case 'ROLLED_BACK':
      return 'rolled-back';
    case 'RECOVERY_REQUIRED':
      return 'manual-recovery-required';
    case 'RUNNER_DIED':
      return 'runner-died';
    default:
      return exitCode === 5 ? 'unreachable' : exitCode === 4 ? 'denied' : 'failed';
  }
}

/** One host's line of a fleet-wide upgrade (plain text). */
export function renderFleetUpgradeHost(host: FleetUpgradeHost): string {
  const what =
    host.from && host.to
      ? `${host.from.version} (${host.from.build?.slice(0, 12) ?? 'development build'}) -> ${host.to.version} (${host.to.build.slice(0, 12)})`
      : '';
  const parts = [
    host.host,
    host.outcome,
    ...(host.canary ? ['(canary)'] : []),
    ...(what ? [what] : []),
    ...(host.transaction ? [`transaction ${host.transaction}`] : []),
    ...(host.error
      ? [`${host.error.code === 'SKIPPED' ? '' : `${host.error.code}: `}${host.error.message}`]
      : []),
  ];
  return parts.join('  ');
}

/** The summary line of a fleet-wide upgrade. */
export function renderFleetUpgradeSummary(document: FleetUpgradeDocument): string {
  const counts = Object.entries(document.summary)
    .filter(([key, n]) => key !== 'hosts' && n > 0)
    .map(([key, n]) => `${n} ${key}`);
  const stopped = document.stoppedAt ? `; stopped at ${document.stoppedAt}` : '';
  return `${document.summary.hosts} host${document.summary.hosts === 1 ? '' : 's'}: ${counts.join(', ') || 'none'}${stopped}`;
}

/** A host's line for its upgrade's result (pure). */
export function upgradedEntry(done: HostUpgraded, canary: boolean): FleetUpgradeHost {
  return {
    host: done.host,
    canary,
    outcome: done.outcome,
    exitCode: done.outcome === 'planned' ? ExitCode.usage : ExitCode.ok,
    ...(done.transaction === undefined ? {} : { transaction: done.transaction }),
    from: done.from,
    to: done.to,
  };
}

/** A host's line for the error its upgrade threw (pure). */
export function failedEntry(
  host: string,
  canary: boolean,
  failure: FleetErrorLike,
): FleetUpgradeHost {
  return {
    host,
    canary,
    outcome: failureOutcome(failure.code, failure.exitCode),
    exitCode: failure.exitCode,
    error: {
      code: failure.code,
      message: failure.message,
      ...(failure.suggestions?.length ? { suggestions: failure.suggestions } : {}),
    },
  };
}

/** The line of a host the run never started, having stopped at `stoppedAt` (pure). */
export function skippedHost(host: string, stoppedAt: string | null): FleetUpgradeHost {
  return {
    host,
    canary: false,
    outcome: 'skipped',
    exitCode: ExitCode.ok,
    error: {
      code: 'SKIPPED',
      message: `not started: the run stopped at ${stoppedAt ?? '?'}, which was not accepted`,
    },
  };
}

/**
 * The `fleet.upgrade/v1` document of a run (pure but for its time): each outcome counted, the
 * exit code the most urgent of the hosts', or 3 when every host was already current.
 */
export function fleetUpgradeDocument(
  run: {
    readonly confirmed: boolean;
    readonly canary: string | null;
    readonly concurrency: number;
    readonly stoppedAt: string | null;
    readonly hosts: readonly FleetUpgradeHost[];
  },
  now = new Date(),
): FleetUpgradeDocument {
  const { hosts } = run;
  const summary = outcomeSummary(hosts);
  const allCurrent = hosts.length > 0 && summary.current === hosts.length;
  return {
    schema: FLEET_UPGRADE_SCHEMA,
    generatedAt: now.toISOString(),
    confirmed: run.confirmed,
    canary: run.canary,
    concurrency: run.concurrency,
    summary,
    stoppedAt: run.confirmed ? run.stoppedAt : null,
    hosts,
    exitCode: allCurrent ? ExitCode.conflict : mostUrgentExit(hosts.map((host) => host.exitCode)),
  };
}

/** How many hosts ended in each outcome, every outcome named (pure). */
function outcomeSummary(
  hosts: readonly FleetUpgradeHost[],
): Record<FleetHostOutcome | 'hosts', number> {
  const summary: Record<FleetHostOutcome | 'hosts', number> = {
    hosts: hosts.length,
    planned: 0,
    current: 0,
    accepted: 0,
    'rolled-back': 0,
    'manual-recovery-required': 0,
    failed: 0,
    'runner-died': 0,
    unreachable: 0,
    denied: 0,
    error: 0,
    skipped: 0,
  };
  for (const host of hosts) summary[host.outcome] += 1;
  return summary;
}
