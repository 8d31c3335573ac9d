/**
 * `fleet schedule install|list|remove|verify`'s service: read-only reports run on a timer of this
 * seat's supervisor (a systemd user timer, a launchd agent or a scheduled task), and the chain of
 * the reports they write checked (schedule/*.ts; docs/scheduled-reports.md, contract §10.3 for
 * the one unattended writer). The registry comes from the container the CLI builds, asked only
 * for `harness reconcile --unattended`'s opt-in (docs/architecture.md "Services").
 */
import * as path from 'node:path';
import { defaultCredentialsPath, type ReportChainSchedule } from '@fleet/core';
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { verifyReports, type VerifyReportsResult } from '../schedule/chain-io.js';
import { operatorScheduleHost } from '../schedule/host.js';
import {
  ensureReportsIgnored,
  installSchedule,
  listSchedules,
  removeSchedule,
  type IgnoreResult,
  type InstalledSchedule,
  type InstallResult,
} from '../schedule/io.js';
import * as model from '../schedule/model.js';
import { assertUnattendedAllowed } from '../schedule/policy.js';

export { chainVerdictLine, type ChainVerdict } from '../schedule/chain.js';
export { verifyReportsExitCode } from '../schedule/chain-io.js';
export type { InstalledSchedule } from '../schedule/io.js';
export { classifyJob, describeLastRun, jobOf, parseEvery } from '../schedule/model.js';
export type { ScheduledJob } from '../schedule/model.js';

export interface ScheduleInstallOptions {
  /** The fleet repository the reports are of and written into (an absolute path). */
  readonly root: string;
  /** What to run: a report, or the opt-in unattended reconcile (`classifyJob`). */
  readonly job: model.ScheduledJob;
  /** The interval (`parseEvery`). */
  readonly everySeconds: number;
  /** The command line that starts this CLI (node and its bin/run.js): the timer runs it. */
  readonly cli: readonly string[];
  /** A warning for stderr (a test period set in the environment). */
  readonly onWarn?: (line: string) => void;
  /** The schedule, once the supervisor has it: before git is made to ignore the reports. */
  readonly onInstalled?: (installed: ScheduleInstalled) => void;
}

export interface ScheduleInstalled extends InstallResult {
  /** The interval as the schedule names it (`6h`, `1d`). */
  readonly every: string;
}

export interface ScheduleInstallOutcome {
  readonly installed: ScheduleInstalled;
  /** The ignore lines added for reports/ and runs.log (`file` null: none was needed). */
  readonly ignored: IgnoreResult;
}

@injectable()
export class ScheduleService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  /**
   * Installs (or replaces) the job's schedule on this seat's supervisor, then makes git ignore
   * what its runs write; `harness reconcile --unattended` only where fleet.yaml at HEAD allows it.
   */
  async install(options: ScheduleInstallOptions): Promise<ScheduleInstallOutcome> {
    const { root, job } = options;
    if (job.kind === 'unattended-reconcile') {
      await assertUnattendedAllowed(root, await this.plugins.registry());
    }
    const host = operatorScheduleHost();
    const name = model.scheduleName(job);
    const argv = [...options.cli, ...model.jobArguments(job, root)];
    // What the run needs from this shell, by name and as absolute paths (never a token): the
    // credentials file it reads, and the XDG directories when this shell sets them.
    const environment: Record<string, string> = {
      FLEET_CREDENTIALS: path.resolve(defaultCredentialsPath(process.env)),
    };
    for (const name of ['XDG_CONFIG_HOME', 'XDG_STATE_HOME']) {
      const value = process.env[name];
      if (value) environment[name] = path.resolve(value);
    }
    const testPeriod = model.testPeriodSeconds(process.env);
    if (testPeriod !== undefined)
      options.onWarn?.(
        `${model.TEST_PERIOD_ENV} is set (tests only): the timer runs every ${testPeriod}s`,
      );
    const result = await installSchedule(host, {
      name,
      title: job.kind === 'report' ? job.verb : 'harness reconcile --unattended',
      argv,
      repo: root,
      everySeconds: options.everySeconds,
      readOnly: job.kind === 'report',
      environment,
      logDir: path.join(host.home, 'Library', 'Logs', 'fleet'),
      ...(testPeriod === undefined ? {} : { testPeriodSeconds: testPeriod }),
    });
    const installed = { ...result, name, every: model.formatEvery(options.everySeconds) };
    options.onInstalled?.(installed);
    // Reports and runs.log are evidence, never the operator's own change (ignore.ts).
    const ignored = await ensureReportsIgnored(root);
    return { installed, ignored };
  }

  /** The schedules fleet installed on this seat, each with its state and last run. */
  list(): Promise<InstalledSchedule[]> {
    return listSchedules(operatorScheduleHost());
  }

  /** Unregisters a schedule fleet installed (`fleet-report-<verb>`, or `<verb>`) and deletes its files. */
  remove(options: { readonly name: string }): ReturnType<typeof removeSchedule> {
    return removeSchedule(operatorScheduleHost(), model.normaliseName(options.name));
  }

  /** Each schedule's chain of reports held against its kept head (`acceptCurrent`: moved first). */
  verify(options: {
    readonly root: string;
    readonly schedules: readonly ReportChainSchedule[];
    readonly acceptCurrent: boolean;
  }): Promise<VerifyReportsResult> {
    return verifyReports(options.root, options.schedules, options.acceptCurrent);
  }
}
