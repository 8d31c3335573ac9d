/**
 * `fleet harness reconcile` (contract §10.3), the pure part: the states, how a target's drift
 * classification turns into a reconcile state, a host's worst state, the exit code of a run, and
 * the unattended-convergence gate. No I/O here: everything is tested with tables.
 */
import { mostUrgentExit, type DriftState } from '@fleet/core/plugin';

/** The JSON document's schema tag. */
export const RECONCILE_SCHEMA = 'fleet.reconcile/v1';

/** What the run was allowed to do. */
export type ReconcileMode = 'dry-run' | 'confirm' | 'unattended';

/** One target's (file's) state after the run. */
export const TARGET_STATES = [
  'current',
  'would-update',
  'updated',
  'deleted',
  'modified',
  'diverged',
  'error',
] as const;
export type TargetState = (typeof TARGET_STATES)[number];

/** One host's state: the worst of its targets, or `offline_pending` when it could not be reached. */
export const HOST_STATES = [...TARGET_STATES, 'offline_pending'] as const;
export type HostState = (typeof HOST_STATES)[number];

/** The drift classification of a file item (contract §8.2), as `fleet drift` reports it. */
export type { DriftState };

export interface ReconcileTarget {
  readonly path: string;
  readonly state: TargetState;
  /** Lines found in no known version (non-zero only for `diverged`). */
  readonly localLines: number;
  /** The file's drift classification before anything was written. */
  readonly drift: DriftState;
  readonly detail?: string;
}

export interface ReconcileHost {
  readonly host: string;
  readonly state: HostState;
  readonly targets: readonly ReconcileTarget[];
  readonly detail?: string;
  /** For `offline_pending`: when a run first found the host pending (kept across runs). */
  readonly pendingSince?: string;
  /** The install's operation id (the node's audit record and the operator log carry it too). */
  readonly operationId?: string;
  /** True when an install failed verification (rolled back, or recovery needed): exit 6. */
  readonly verificationFailed?: boolean;
  /** True when the host refused the credentials (an exit-4 code; its state is `error`): exit 4. */
  readonly denied?: boolean;
}

export interface ReconcileDocument {
  readonly schema: typeof RECONCILE_SCHEMA;
  readonly generatedAt: string;
  readonly mode: ReconcileMode;
  /** The repository commit the canonical files were read at. */
  readonly repoCommit: string;
  /** The git blob sha of the canonical CLAUDE.md at that commit. */
  readonly canonicalSha: string;
  readonly summary: { readonly hosts: number } & Readonly<Record<HostState, number>>;
  readonly hosts: readonly ReconcileHost[];
}

/**
 * Severity, worst last: `error` > `diverged` > `modified` > `deleted` > `would-update` > `updated`
 * > `current` (contract §10.3 ranks would-update and updated together; a host cannot show both in
 * one run, and if it ever did, the drift that remains is what matters).
 */
const RANK: Readonly<Record<TargetState, number>> = {
  current: 0,
  updated: 1,
  'would-update': 2,
  deleted: 3,
  modified: 4,
  diverged: 5,
  error: 6,
};

/** The worst of some target states (`current` for none: a host with nothing to manage). */
export function worstState(states: readonly TargetState[]): TargetState {
  let worst: TargetState = 'current';
  for (const state of states) if (RANK[state] > RANK[worst]) worst = state;
  return worst;
}

/**
 * True for the classifications a reconcile may write — even with --confirm, even unattended: the
 * file equals a known version whole (`stale`), or fleet never wrote there (`missing`). A hand
 * change (`modified`, `diverged`) and a file someone removed (`deleted`) never are (contract §8.2).
 */
export function healable(drift: DriftState): boolean {
  return drift === 'stale' || drift === 'missing';
}

/**
 * A target's state before any write: current stays current; stale and missing would be updated;
 * diverged, modified and deleted are never written; anything else (unsupported, damaged markers,
 * a render error, a canonical the installer refuses) is an error the operator must look at.
 */
export function plannedState(drift: DriftState): TargetState {
  if (drift === 'current') return 'current';
  if (healable(drift)) return 'would-update';
  if (drift === 'diverged' || drift === 'modified' || drift === 'deleted') return drift;
  return 'error';
}

/** A host's own exit code: 6 failed verification, 4 denied, 0 converged, else 1 (drift remains). */
function hostExitCode(host: ReconcileHost): number {
  if (host.verificationFailed === true) return 6;
  if (host.denied === true) return 4;
  return host.state === 'current' || host.state === 'updated' ? 0 : 1;
}

/**
 * The exit code of a run (contract §7 as the verb applies it), the most urgent of the hosts':
 * 6 when an install failed verification, 4 when a host refused the credentials, 1 when drift
 * remains anywhere (would-update, deleted, modified, diverged, offline_pending, error — the
 * report was still produced), 0 when every host is current or updated. An unreachable host is
 * `offline_pending` (1), not 5: reconcile does not need every host, the next run converges it.
 */
export function reconcileExitCode(hosts: readonly ReconcileHost[]): number {
  return mostUrgentExit(hosts.map(hostExitCode));
}

export function summarise(hosts: readonly ReconcileHost[]): ReconcileDocument['summary'] {
  const counts = Object.fromEntries(HOST_STATES.map((state) => [state, 0])) as Record<
    HostState,
    number
  >;
  for (const host of hosts) counts[host.state] += 1;
  return { hosts: hosts.length, ...counts };
}

// The unattended-convergence gate is generic on a domain's declaration, so it lives in @fleet/core
// (the CLI's `fleet schedule install … --unattended` checks it too); re-exported for this plugin.
export { unattendedRefusal, type UnattendedGate, type UnattendedPolicy } from '@fleet/core/plugin';
