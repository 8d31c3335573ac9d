/**
 * `fleet schedule` (contract §7, §1 principle 2, §10.3): what may run on a timer, how often, and under
 * which name — pure functions, no I/O.
 *
 * Only the read-only reports (`drift`, `version`) are schedulable. The one exception is contract §10.3's
 * `harness reconcile --unattended`, which the caller admits only after reading the committed
 * fleet.yaml (`domains.harness-policy.unattended: allow` at HEAD). Everything else — `config
 * install`, `config adopt`, `upgrade`, `bootstrap apply`, plain `harness reconcile`, … — is refused
 * with `UNATTENDED_REFUSED` (exit 7): scheduling a verb is running it unattended.
 */
import { FleetError } from '@fleet/core';

/** Every fleet-installed schedule's name starts with this (unit files, plists, tasks). */
export const SCHEDULE_PREFIX = 'fleet-report-';
/** launchd labels: `dev.fleet.report-<slug>`, fleet's one label scheme (`fleet version` reads `dev.fleet.*`). */
export const LAUNCHD_LABEL_PREFIX = 'dev.fleet.report-';

export const DEFAULT_EVERY = '1d';
/** The shortest interval accepted (a report asks every host: not a busy loop). */
export const MIN_EVERY_SECONDS = 5 * 60;
/** The longest (Task Scheduler's repetition interval stops at 31 days). */
export const MAX_EVERY_SECONDS = 31 * 24 * 3600;

/** What a schedule runs, as fleet arguments (after `<node> <fleet bin>`). */
export type ScheduledJob =
  | { readonly kind: 'report'; readonly verb: 'drift' | 'version'; readonly slug: string }
  | { readonly kind: 'unattended-reconcile'; readonly slug: 'harness-reconcile' };

const UNIT_SECONDS: Record<string, number> = { m: 60, min: 60, h: 3600, d: 86_400 };

/** Parses `30m`, `6h`, `1d` (also `90min`) into seconds; at least 5m, at most 31d. */
export function parseEvery(text: string): number {
  const match = /^([1-9][0-9]{0,6})(m|min|h|d)$/.exec(text.trim());
  if (!match) {
    throw new FleetError(
      'USAGE',
      `--every ${JSON.stringify(text)} is not a duration: use a whole number with m, h or d (30m, 6h, 1d)`,
    );
  }
  const seconds = Number(match[1]) * (UNIT_SECONDS[match[2] as string] as number);
  if (seconds < MIN_EVERY_SECONDS)
    throw new FleetError('USAGE', `--every ${text} is shorter than the minimum of 5m`);
  if (seconds > MAX_EVERY_SECONDS)
    throw new FleetError('USAGE', `--every ${text} is longer than the maximum of 31d`);
  return seconds;
}

/** The largest whole unit of an interval (`3600` → `1h`), for display and for systemd. */
export function formatEvery(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/**
 * Decides whether `words` (the verb as typed: `drift`, `config install`, `harness reconcile`) may
 * be scheduled. Throws `UNATTENDED_REFUSED` (exit 7) for every writing verb.
 */
export function classifyJob(words: readonly string[], unattended: boolean): ScheduledJob {
  const line = words.join(' ');
  if (words.length === 1 && (words[0] === 'drift' || words[0] === 'version')) {
    if (unattended)
      throw new FleetError('USAGE', `--unattended applies to harness reconcile only, not ${line}`);
    return { kind: 'report', verb: words[0], slug: words[0] };
  }
  if (line === 'harness reconcile') {
    if (unattended) return { kind: 'unattended-reconcile', slug: 'harness-reconcile' };
    throw new FleetError(
      'UNATTENDED_REFUSED',
      'schedule refused: harness reconcile writes to hosts; only `harness reconcile --unattended` may be scheduled, and only when fleet.yaml opts in (contract §10.3)',
      { suggestions: ['fleet schedule install harness reconcile --unattended'] },
    );
  }
  throw new FleetError(
    'UNATTENDED_REFUSED',
    `schedule refused: ${JSON.stringify(line)} is not a read-only report; only drift and version run on a timer (no timer ever writes configuration)`,
    { suggestions: ['fleet schedule install drift', 'fleet schedule install version'] },
  );
}

/** What `report-run` accepts: the read-only reports and the §10.3 unattended reconcile. */
export const REPORT_RUN_JOBS = ['drift', 'version', 'harness-reconcile'] as const;
export type ReportRunJob = (typeof REPORT_RUN_JOBS)[number];

/**
 * The fleet arguments a schedule runs (after `<node> <fleet bin>`): every job through
 * `report-run`, which appends one line per run to the repository's reports/runs.log — so a
 * scheduled reconcile that was refused, or failed on its credentials before it could log
 * anything itself, leaves a line the operator finds (and `fleet schedule list` shows).
 */
export function jobArguments(job: ScheduledJob, repo: string): string[] {
  return ['report-run', job.kind === 'report' ? job.verb : job.slug, '--repo', repo];
}

/** The verb and its arguments `report-run` runs for `job` (`--report-dir` for a report). */
export function reportRunCommand(
  job: ReportRunJob,
  repo: string,
  reportDir: string | null,
): { readonly id: string; readonly argv: string[] } {
  if (job === 'harness-reconcile')
    return { id: 'harness:reconcile', argv: ['--unattended', '--repo', repo] };
  if (reportDir === null) throw new FleetError('INTERNAL', `report-run ${job}: no report folder`);
  return { id: job, argv: ['--repo', repo, '--report-dir', reportDir] };
}

/** `fleet-report-<slug>`: the schedule's name on every platform. */
export function scheduleName(job: ScheduledJob): string {
  return `${SCHEDULE_PREFIX}${job.slug}`;
}

const NAME = /^fleet-report-[a-z][a-z-]{0,40}$/;

/** A NAME as `list` prints it (`fleet-report-drift`), or its slug (`drift`); else a usage error. */
export function normaliseName(name: string): string {
  const full = name.startsWith(SCHEDULE_PREFIX) ? name : `${SCHEDULE_PREFIX}${name}`;
  if (!NAME.test(full)) {
    throw new FleetError(
      'USAGE',
      `${JSON.stringify(name)} is not a fleet schedule name (fleet-report-<verb>, as \`fleet schedule list\` prints it)`,
    );
  }
  return full;
}

/** `fleet-report-drift` → `dev.fleet.report-drift`. */
export function launchdLabel(name: string): string {
  return `${LAUNCHD_LABEL_PREFIX}${name.slice(SCHEDULE_PREFIX.length)}`;
}

/**
 * Tests only: `FLEET_SCHEDULE_TEST_PERIOD_SECONDS=N` makes the timer's first run and period N
 * seconds, so a test sees a real timer fire (docs/scheduled-reports.md). Not a user setting:
 * `--every` keeps its 5-minute floor; `fleet schedule install` says so when it is set.
 */
export const TEST_PERIOD_ENV = 'FLEET_SCHEDULE_TEST_PERIOD_SECONDS';

export function testPeriodSeconds(env: NodeJS.ProcessEnv): number | undefined {
  const text = env[TEST_PERIOD_ENV];
  if (text === undefined || text === '') return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(text))
    throw new FleetError(
      'USAGE',
      `${TEST_PERIOD_ENV}=${JSON.stringify(text)} is not a whole number of seconds`,
    );
  return Number(text);
}

/** The job a schedule's command line runs (the word after `report-run`), when it has one. */
export function jobOf(command: readonly string[]): string | undefined {
  const at = command.indexOf('report-run');
  return at === -1 ? undefined : command[at + 1];
}

/**
 * The last run of a schedule, for a person (`fleet schedule list`): `running` while it runs (the
 * manager's Result is then the previous run's, or `success` before any ended); for a drift or
 * version report, exit 1 is `drift found` — the report was written and found drift (contract §7),
 * not a failure, though the manager records it as `exit-code`; anything else as the manager says.
 */
export function describeLastRun(
  run: {
    readonly result: string;
    readonly exitStatus: number | null;
    readonly startedAt: string | null;
    readonly endedAt: string | null;
    readonly running: boolean;
  },
  job: string | undefined,
): string {
  const started = `started ${run.startedAt ?? '?'}`;
  if (run.running) return `running, ${started}`;
  const ended = run.endedAt ? `, ended ${run.endedAt}` : '';
  const report = job === 'drift' || job === 'version';
  if (report && run.exitStatus === 1 && (run.result === 'exit-code' || run.result === 'success'))
    return `drift found (exit 1), ${started}${ended}`;
  return `${run.result}, exit ${run.exitStatus ?? '?'}, ${started}${ended}`;
}
