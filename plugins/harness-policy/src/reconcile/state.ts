/**
 * The reconcile's memory between runs (contract §10.3), pure: the state file's shape, how one run is
 * merged into the previous state (an offline host keeps the time it was *first* seen pending until
 * a run reaches it), and the rolling log's lines, bounded to {@link LOG_MAX_LINES}.
 *
 * The state file (`$XDG_STATE_HOME/fleet/harness-reconcile.json`):
 *
 * ```json
 * { "schema": "fleet.reconcile-state/v1", "last_run": "…", "canonical_sha": "…", "repo_commit": "…",
 *   "mode": "confirm", "current": ["node-01"], "updated": [], "would_update": [], "deleted": [],
 *   "modified": [], "diverged": [],
 *   "offline_pending": [{ "host": "node-03", "first_seen": "…", "last_seen": "…" }], "errors": [] }
 * ```
 *
 * `deleted` and `modified` came later: a state file written before them (without the two lists)
 * is read as having none.
 */
import type { HostState, ReconcileMode } from './model.js';

export const STATE_SCHEMA = 'fleet.reconcile-state/v1';
export const LOG_MAX_LINES = 500;

export interface PendingHost {
  readonly host: string;
  /** When a run first found it unreachable; kept across runs until a run reaches it. */
  readonly first_seen: string;
  /** The latest run that found it unreachable. */
  readonly last_seen: string;
}

export interface ReconcileState {
  readonly schema: typeof STATE_SCHEMA;
  readonly last_run: string;
  readonly canonical_sha: string;
  readonly repo_commit: string;
  readonly mode: ReconcileMode;
  readonly current: readonly string[];
  readonly updated: readonly string[];
  readonly would_update: readonly string[];
  readonly deleted: readonly string[];
  readonly modified: readonly string[];
  readonly diverged: readonly string[];
  readonly offline_pending: readonly PendingHost[];
  readonly errors: readonly string[];
}

const LISTS = [
  'current',
  'updated',
  'would_update',
  'deleted',
  'modified',
  'diverged',
  'errors',
] as const;
/** Lists a state file may lack (written before they existed): read as empty. */
const LATER_LISTS: readonly ListKey[] = ['deleted', 'modified'];
type ListKey = (typeof LISTS)[number];

const LIST_OF: Readonly<Record<Exclude<HostState, 'offline_pending'>, ListKey>> = {
  current: 'current',
  updated: 'updated',
  'would-update': 'would_update',
  deleted: 'deleted',
  modified: 'modified',
  diverged: 'diverged',
  error: 'errors',
};

const MODES: readonly ReconcileMode[] = ['dry-run', 'confirm', 'unattended'];

function isTime(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}

function isNameList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string' && item !== '');
}

/**
 * Checks a parsed state file; returns the problem or `null`. Hand-written rather than zod: the
 * plugin depends on `@fleet/core` only, and the shape is small.
 */
export function stateProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'not a JSON object';
  const state = value as Record<string, unknown>;
  const known = new Set<string>([
    'schema',
    'last_run',
    'canonical_sha',
    'repo_commit',
    'mode',
    ...LISTS,
    'offline_pending',
  ]);
  const unknown = Object.keys(state).filter((key) => !known.has(key));
  if (unknown.length > 0) return `unknown field ${unknown[0]}`;
  if (state['schema'] !== STATE_SCHEMA) return `schema is not ${STATE_SCHEMA}`;
  if (!isTime(state['last_run'])) return 'last_run is not a time';
  if (typeof state['canonical_sha'] !== 'string') return 'canonical_sha is not a string';
  if (typeof state['repo_commit'] !== 'string') return 'repo_commit is not a string';
  if (!MODES.includes(state['mode'] as ReconcileMode)) return 'mode is not a reconcile mode';
  for (const key of LISTS) {
    if (state[key] === undefined && LATER_LISTS.includes(key)) continue;
    if (!isNameList(state[key])) return `${key} is not a list of host names`;
  }
  const pending = state['offline_pending'];
  if (!Array.isArray(pending)) return 'offline_pending is not a list';
  for (const entry of pending) {
    if (typeof entry !== 'object' || entry === null)
      return 'offline_pending has a non-object entry';
    const { host, first_seen, last_seen, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length > 0)
      return `offline_pending has an unknown field ${Object.keys(rest)[0]}`;
    if (typeof host !== 'string' || host === '')
      return 'offline_pending has an entry without a host';
    if (!isTime(first_seen) || !isTime(last_seen))
      return `offline_pending.${host} has no valid times`;
  }
  const seen = new Set<string>();
  for (const host of [
    ...LISTS.flatMap((key) => (state[key] as string[] | undefined) ?? []),
    ...pending.map((p) => (p as PendingHost).host),
  ]) {
    if (seen.has(host)) return `host ${host} is listed twice`;
    seen.add(host);
  }
  return null;
}

/** Where each host stands in a state (`undefined`: not in it). */
export function hostStates(state: ReconcileState): Map<string, HostState> {
  const out = new Map<string, HostState>();
  for (const [hostState, key] of Object.entries(LIST_OF) as [
    Exclude<HostState, 'offline_pending'>,
    ListKey,
  ][]) {
    for (const host of state[key]) out.set(host, hostState);
  }
  for (const pending of state.offline_pending) out.set(pending.host, 'offline_pending');
  return out;
}

export interface RunResult {
  readonly now: string;
  readonly canonicalSha: string;
  readonly repoCommit: string;
  readonly mode: ReconcileMode;
  /** The hosts this run visited, with the state it found. */
  readonly hosts: readonly { readonly host: string; readonly state: HostState }[];
  /**
   * Every host the reconcile is responsible for now (every host running the domain). A host the
   * run did not visit (`--host`) keeps its previous entry; a host no longer in the fleet is dropped.
   */
  readonly fleet: readonly string[];
}

/**
 * The state after a run. A host found unreachable keeps the `first_seen` of its previous
 * `offline_pending` entry (or starts one now); a host the run reached leaves `offline_pending`
 * whatever it was found to be. Lists are sorted, so the file is stable across runs.
 */
export function mergeState(previous: ReconcileState | null, run: RunResult): ReconcileState {
  const fleet = new Set(run.fleet);
  const lists: Record<ListKey, string[]> = {
    current: [],
    updated: [],
    would_update: [],
    deleted: [],
    modified: [],
    diverged: [],
    errors: [],
  };
  const pending: PendingHost[] = [];
  const previousPending = new Map(
    (previous?.offline_pending ?? []).map((entry) => [entry.host, entry]),
  );
  const visited = new Set(run.hosts.map((host) => host.host));

  for (const { host, state } of run.hosts) {
    if (state === 'offline_pending') {
      pending.push({
        host,
        first_seen: previousPending.get(host)?.first_seen ?? run.now,
        last_seen: run.now,
      });
    } else {
      lists[LIST_OF[state]].push(host);
    }
  }
  if (previous) {
    for (const [host, state] of hostStates(previous)) {
      if (visited.has(host) || !fleet.has(host)) continue;
      if (state === 'offline_pending') pending.push(previousPending.get(host) as PendingHost);
      else lists[LIST_OF[state]].push(host);
    }
  }
  const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  for (const key of LISTS) lists[key].sort(byName);
  pending.sort((a, b) => byName(a.host, b.host));
  return {
    schema: STATE_SCHEMA,
    last_run: run.now,
    canonical_sha: run.canonicalSha,
    repo_commit: run.repoCommit,
    mode: run.mode,
    current: lists.current,
    updated: lists.updated,
    would_update: lists.would_update,
    deleted: lists.deleted,
    modified: lists.modified,
    diverged: lists.diverged,
    offline_pending: pending,
    errors: lists.errors,
  };
}

/** The first-seen time of a pending host in a state, if it is pending there. */
export function pendingSince(state: ReconcileState, host: string): string | undefined {
  return state.offline_pending.find((entry) => entry.host === host)?.first_seen;
}

/**
 * The log after appending `lines`: the last {@link LOG_MAX_LINES} lines, each ending in a newline.
 * A partial last line (a run killed mid-write by something other than fleet) is kept as a line.
 */
export function trimLog(existing: string, lines: readonly string[], max = LOG_MAX_LINES): string {
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`max must be a positive integer, not ${max}`);
  const old = existing.split('\n');
  if (old[old.length - 1] === '') old.pop();
  const all = [...old, ...lines.map((line) => line.replace(/[\r\n]+/g, ' '))];
  const kept = all.slice(Math.max(0, all.length - max));
  return kept.length === 0 ? '' : `${kept.join('\n')}\n`;
}
