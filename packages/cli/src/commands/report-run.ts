import { Args } from '@oclif/core';
import { FleetCommand } from '../base-command.js';

/**
 * What a scheduled report runs (`fleet schedule install`): the report verb with `--report-dir`
 * set to the repository's `reports/<verb>/<YYYY-MM-DD>/` for the date of this run (UTC), which a
 * unit file cannot compute. Only the read-only reports are accepted; its exit code is the verb's.
 */
export default class ReportRun extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary =
    'Run a read-only report into the dated reports/ folder (for schedules).';
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'none' as const; // run by a timer; its log keeps the report paths
  static override args = {
    verb: Args.string({ description: 'drift or version', required: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ReportRun);
    const core = await import('@fleet/core');
    const path = await import('node:path');
    const verb = args.verb;
    if (verb !== 'drift' && verb !== 'version') {
      throw new core.FleetError(
        'UNATTENDED_REFUSED',
        `report-run refused: ${JSON.stringify(verb)} is not a read-only report (drift, version)`,
      );
    }
    const root = path.resolve(await this.findRepo(flags.repo));
    const dir = core.datedReportDir(root, verb, new Date());
    await this.config.runCommand(verb, ['--repo', root, '--report-dir', dir]);
  }
}
