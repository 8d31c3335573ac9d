import { Args, Flags } from '@fleet/core/command';
import type { FleetErrorLike } from '@fleet/core';
import { FleetCommand, reportedFailure } from '../base-command.js';
import * as path from 'node:path';
import { parseEnvironmentFlags, ReportRunService, reportRunJob } from '@fleet/operator/report-run';

/**
 * What a schedule runs (`fleet schedule install`): the report verb into the repository's dated
 * `reports/<verb>/<YYYY-MM-DD>/`, chained, or contract §10.3's `harness reconcile --unattended`,
 * and a line per run in `<repo>/reports/runs.log` (ReportRunService, @fleet/operator/report-run).
 * Only the read-only reports and that reconcile are accepted; its exit code is the verb's.
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
    const job = reportRunJob(args.verb);
    Object.assign(process.env, parseEnvironmentFlags(flags.env ?? []));
    const root = path.resolve(await this.findRepo(flags.repo));
    const service = await this.service(ReportRunService);
    await service.run({
      root,
      job,
      runVerb: async (id, argv) => {
        reportedFailure.last = null;
        await this.config.runCommand(id, argv);
        return {
          failure: reportedFailure.last as FleetErrorLike | null,
          exitCode: Number(process.exitCode ?? 0),
        };
      },
      onNote: (line) => this.note(line),
      onWarn: (line) => this.warn(line),
    });
  }
}
