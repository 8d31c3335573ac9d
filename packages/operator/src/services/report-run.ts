/**
 * `fleet report-run`'s service, what a schedule's timer runs (`fleet schedule install`): the
 * report verb with `--report-dir` set to the repository's `reports/<verb>/<YYYY-MM-DD>/` for the
 * date of this run (UTC), which a unit file cannot compute — or contract §10.3's
 * `harness reconcile --unattended`, which re-checks its opt-in itself every run — and a line per
 * run in `<repo>/reports/runs.log` (time, job, exit code, the report file or the error). A report
 * is written by the verb into a private staging folder, then into the dated folder as the next
 * link of its schedule's chain (schedule/chain-io.ts, docs/scheduled-reports.md "Reports as
 * evidence"); git is made to ignore what runs write. Its own service, not one of
 * `ScheduleService`'s: the timer, not the operator, runs it, and it loads none of the
 * supervisor's modules. Needs no plugin: nothing is injected.
 */
import { appendFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  datedReportDir,
  escapeControl,
  FleetError,
  isFleetError,
  type FleetErrorLike,
  type ReportChainSchedule,
} from '@fleet/core';
import { injectable } from '@fleet/core/di';
import { writeChainedReport } from '../schedule/chain-io.js';
import { ensureReportsIgnored } from '../schedule/ignore.js';
import { REPORT_RUN_JOBS, reportRunCommand, type ReportRunJob } from '../schedule/model.js';

export { parseEnvironmentFlags } from '../schedule/generate.js';
export type { ReportRunJob } from '../schedule/model.js';

/** The job named, if `report-run` runs it: a read-only report or the unattended reconcile. */
export function reportRunJob(verb: string): ReportRunJob {
  const job = REPORT_RUN_JOBS.find((known) => known === verb);
  if (job === undefined) {
    throw new FleetError(
      'UNATTENDED_REFUSED',
      `report-run refused: ${JSON.stringify(verb)} is not a read-only report (drift, version) or the unattended harness-reconcile`,
    );
  }
  return job;
}

/** How a verb run in this process ended, as it reported it. */
export interface VerbEnding {
  /** The failure the verb reported (its error printed, its exit code set), or null. */
  readonly failure: FleetErrorLike | null;
  /** The process's exit code after it. */
  readonly exitCode: number;
}

export interface ReportRunOptions {
  /** The fleet repository (an absolute path). */
  readonly root: string;
  readonly job: ReportRunJob;
  /** Runs a verb of this CLI in this process (its command id and arguments). */
  readonly runVerb: (id: string, argv: string[]) => Promise<VerbEnding>;
  /** A line for stderr (the chained report, the ignore lines added). */
  readonly onNote?: (line: string) => void;
  /** A warning for stderr (git could not be made to ignore the reports). */
  readonly onWarn?: (line: string) => void;
}

@injectable()
export class ReportRunService {
  /**
   * Runs the job, chains its report and logs the run in runs.log — also when the verb throws,
   * which is then thrown on.
   */
  async run(options: ReportRunOptions): Promise<void> {
    const { root, job } = options;
    const started = new Date();
    const dir = job === 'harness-reconcile' ? null : datedReportDir(root, job, started);
    const staging = dir === null ? null : await mkdtemp(path.join(tmpdir(), 'fleet-report-run-'));
    const command = reportRunCommand(job, root, staging);
    const runsLog = path.join(root, 'reports', 'runs.log');
    // One line per run in <repo>/reports/runs.log, success or not: where an operator finds that
    // a scheduled run failed, and why (`fleet schedule list` shows the last one).
    let outcome: string;
    try {
      // The verb reports its own failure (exit code set, error printed): log what it was.
      const ending = await options.runVerb(command.id, command.argv);
      const failed = ending.failure;
      let written = '';
      if (staging !== null && dir !== null && job !== 'harness-reconcile') {
        written = await chain(root, job, dir, staging, options);
      }
      outcome =
        failed === null
          ? `exit ${ending.exitCode}${written}`
          : `exit ${failed.exitCode} ${failed.code}: ${failed.message}`;
    } catch (error) {
      const failure = isFleetError(error)
        ? `exit ${error.exitCode} ${error.code}: ${error.message}`
        : `exit 1 ${String(error)}`;
      outcome = failure;
      await appendRunLine(runsLog, started, job, outcome);
      await ignoreRuns(root, options);
      throw error;
    } finally {
      if (staging !== null) await rm(staging, { recursive: true, force: true });
    }
    await appendRunLine(runsLog, started, job, outcome);
    await ignoreRuns(root, options);
  }
}

/** The staged set, written into `dir` as the chain's next link: ` <file> (chain seq N)`. */
async function chain(
  root: string,
  schedule: ReportChainSchedule,
  dir: string,
  staging: string,
  options: Pick<ReportRunOptions, 'onNote'>,
): Promise<string> {
  const staged = (ext: string) => readFile(path.join(staging, `${schedule}.${ext}`), 'utf8');
  const json = await staged('json').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null; // the verb failed before it wrote a report
    throw error;
  });
  if (json === null) return '';
  const report = JSON.parse(json) as { generatedAt: string };
  const result = await writeChainedReport({
    root,
    schedule,
    dir,
    report,
    companions: { md: await staged('md'), html: await staged('html') },
  });
  options.onNote?.(`report chained as seq ${result.chain.seq}: ${result.files.join(', ')}`);
  return ` ${result.files[0] ?? dir} (chain seq ${result.chain.seq})`;
}

/** Reports and runs.log never show up as the operator's change (a failure only warns). */
async function ignoreRuns(
  root: string,
  options: Pick<ReportRunOptions, 'onNote' | 'onWarn'>,
): Promise<void> {
  try {
    const ignored = await ensureReportsIgnored(root);
    if (ignored.file !== null)
      options.onNote?.(`git now ignores ${ignored.added.join(', ')} (${ignored.file})`);
  } catch (error) {
    options.onWarn?.(`could not make git ignore the reports: ${(error as Error).message}`);
  }
}

/** Appends `<ISO time> <verb> <outcome>` (one line, control characters escaped). */
async function appendRunLine(file: string, at: Date, verb: string, outcome: string) {
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(
    file,
    `${at.toISOString()} ${verb} ${escapeControl(outcome).replace(/\n/g, ' ')}\n`,
  );
}
