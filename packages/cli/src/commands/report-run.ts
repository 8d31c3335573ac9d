import { mkdtemp, readFile, rm, appendFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Args, Flags } from '@fleet/core/command';
import type { FleetErrorLike, ReportChainSchedule } from '@fleet/core';
import { writeChainedReport } from '@fleet/operator/schedule/chain-io.js';
import { ensureReportsIgnored } from '@fleet/operator/schedule/ignore.js';
import { FleetCommand, reportedFailure } from '../base-command.js';
import * as core from '@fleet/core';
import * as path from 'node:path';
import * as model from '@fleet/operator/schedule/model.js';
import { parseEnvironmentFlags } from '@fleet/operator/schedule/generate.js';

/**
 * What a schedule runs (`fleet schedule install`): the report verb with `--report-dir` set to the
 * repository's `reports/<verb>/<YYYY-MM-DD>/` for the date of this run (UTC), which a unit file
 * cannot compute — or contract §10.3's `harness reconcile --unattended`, which re-checks its
 * opt-in itself every run — and a line per run in `<repo>/reports/runs.log` (time, job, exit
 * code, the report file or the error). Only the read-only reports and that reconcile are
 * accepted; its exit code is the verb's. A report is written by the verb into a private staging
 * folder, then into the dated folder as the next link of its schedule's chain (chain-io.ts,
 * docs/scheduled-reports.md "Reports as evidence"); git is made to ignore what runs write.
 */
export default class ReportRun extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary =
    'Run a read-only report into the dated reports/ folder (for schedules).';
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'none' as const; // run by a timer; its log keeps the report paths
  static override flags = {
    env: Flags.string({
      description:
        'NAME=VALUE to set for the run (FLEET_CREDENTIALS, XDG_CONFIG_HOME, XDG_STATE_HOME; absolute paths): how a Task Scheduler task carries its environment',
      multiple: true,
    }),
  };
  static override args = {
    verb: Args.string({ description: 'drift, version or harness-reconcile', required: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ReportRun);
    const verb = args.verb;
    if (!(model.REPORT_RUN_JOBS as readonly string[]).includes(verb)) {
      throw new core.FleetError(
        'UNATTENDED_REFUSED',
        `report-run refused: ${JSON.stringify(verb)} is not a read-only report (drift, version) or the unattended harness-reconcile`,
      );
    }
    const job = verb as (typeof model.REPORT_RUN_JOBS)[number];
    Object.assign(process.env, parseEnvironmentFlags(flags.env ?? []));
    const root = path.resolve(await this.findRepo(flags.repo));
    const started = new Date();
    const dir = job === 'harness-reconcile' ? null : core.datedReportDir(root, job, started);
    const staging = dir === null ? null : await mkdtemp(join(tmpdir(), 'fleet-report-run-'));
    const command = model.reportRunCommand(job, root, staging);
    const runsLog = path.join(root, 'reports', 'runs.log');
    // One line per run in <repo>/reports/runs.log, success or not: where an operator finds that
    // a scheduled run failed, and why (`fleet schedule list` shows the last one).
    let outcome: string;
    try {
      reportedFailure.last = null;
      await this.config.runCommand(command.id, command.argv);
      // The verb reports its own failure (exit code set, error printed): log what it was.
      const failed = reportedFailure.last as FleetErrorLike | null;
      let written = '';
      if (staging !== null && dir !== null && job !== 'harness-reconcile') {
        written = await this.chain(root, job, dir, staging);
      }
      outcome =
        failed === null
          ? `exit ${Number(process.exitCode ?? 0)}${written}`
          : `exit ${failed.exitCode} ${failed.code}: ${failed.message}`;
    } catch (error) {
      const failure = core.isFleetError(error)
        ? `exit ${error.exitCode} ${error.code}: ${error.message}`
        : `exit 1 ${String(error)}`;
      outcome = failure;
      await appendRunLine(runsLog, started, verb, outcome);
      await this.ignoreRuns(root);
      throw error;
    } finally {
      if (staging !== null) await rm(staging, { recursive: true, force: true });
    }
    await appendRunLine(runsLog, started, verb, outcome);
    await this.ignoreRuns(root);
  }

  /** The staged set, written into `dir` as the chain's next link: ` <file> (chain seq N)`. */
  private async chain(
    root: string,
    schedule: ReportChainSchedule,
    dir: string,
    staging: string,
  ): Promise<string> {
    const staged = (ext: string) => readFile(join(staging, `${schedule}.${ext}`), 'utf8');
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
    this.note(`report chained as seq ${result.chain.seq}: ${result.files.join(', ')}`);
    return ` ${result.files[0] ?? dir} (chain seq ${result.chain.seq})`;
  }

  /** Reports and runs.log never show up as the operator's change (a failure only warns). */
  private async ignoreRuns(root: string): Promise<void> {
    try {
      const ignored = await ensureReportsIgnored(root);
      if (ignored.file !== null)
        this.note(`git now ignores ${ignored.added.join(', ')} (${ignored.file})`);
    } catch (error) {
      this.warn(`could not make git ignore the reports: ${(error as Error).message}`);
    }
  }
}

/** Appends `<ISO time> <verb> <outcome>` (one line, control characters escaped). */
async function appendRunLine(file: string, at: Date, verb: string, outcome: string) {
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(
    file,
    `${at.toISOString()} ${verb} ${core.escapeControl(outcome).replace(/\n/g, ' ')}\n`,
  );
}
