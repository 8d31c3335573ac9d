import { Args, Flags } from '@fleet/core/command';
import {
  escapeControl,
  FleetError,
  REPORT_CHAIN_SCHEDULES,
  type ReportChainSchedule,
} from '@fleet/core';
import {
  chainVerdictLine,
  ScheduleService,
  verifyReportsExitCode,
  type ChainVerdict,
} from '@fleet/operator/schedule';
import { FleetCommand } from '../../base-command.js';

export interface ScheduleVerifyJson {
  readonly schema: 'fleet.report-verify/v1';
  /** The repository's real path, and the file its chains' heads are kept in. */
  readonly repo: string;
  readonly headsFile: string;
  readonly chains: readonly ChainVerdict[];
  /** With --accept-current: the chains whose head was moved to the folder's newest report. */
  readonly accepted: readonly ReportChainSchedule[];
}

export default class ScheduleVerify extends FleetCommand {
  static override summary =
    "Check the chain of the schedules' reports: none deleted, edited or moved.";
  static override description = `Each report a schedule writes (reports/<verb>/<YYYY-MM-DD>/<verb>[-N].json) names the commit it read and carries a link: its place in its schedule's chain and the sha256 of the report before it (and of its own .md and .html). The chain is followed from its head — the newest report, kept in your state directory ($XDG_STATE_HOME/fleet/report-heads/, not in the repository) — back to its first report: a report deleted, edited, truncated or moved, or a companion .md/.html changed, is reported with its file name and seq. A report no link leads to is named, and so is a head that is missing or that reports were written past (unanchored): the newest reports' deletion could not be seen then. Reports written before chains existed, or by hand with --report-dir, have no link: they are counted as before the chain, never broken.

--accept-current (after investigating a flagged head): hold each chain to the newest chained report in the folder from now on; a break further back stays reported.

Exit 0 when every chain is intact (or has no chained report yet); 6 when any is broken or unanchored.`;
  static override examples = [
    '<%= config.bin %> schedule verify',
    '<%= config.bin %> schedule verify drift --json',
    '<%= config.bin %> schedule verify version --accept-current',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'none' as const; // it reads the reports folder, no host
  static override args = {
    verb: Args.string({ description: 'drift or version (default: both)', required: false }),
  };
  static override flags = {
    'accept-current': Flags.boolean({
      description: "hold each chain to the folder's newest chained report from now on",
      default: false,
    }),
  };

  async run(): Promise<ScheduleVerifyJson> {
    const { args, flags } = await this.parse(ScheduleVerify);
    const schedules = schedulesOf(args.verb);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(ScheduleService);
    const result = await service.verify({
      root,
      schedules,
      acceptCurrent: flags['accept-current'],
    });
    for (const schedule of result.accepted) {
      this.note(
        `${schedule}: the chain's head is now the folder's newest report (${result.headsFile})`,
      );
    }
    if (!this.jsonEnabled()) {
      for (const verdict of result.chains) {
        this.log(`${verdict.schedule.padEnd(8)} ${escapeControl(chainVerdictLine(verdict))}`);
        for (const problem of verdict.problems) {
          const at = problem.seq === null ? problem.file : `seq ${problem.seq} (${problem.file})`;
          this.log(
            `    ${verdict.schedule}: ${problem.kind} at ${escapeControl(at)}: ${escapeControl(problem.message)}`,
          );
        }
        for (const note of verdict.notes)
          this.log(`    ${verdict.schedule}: note: ${escapeControl(note)}`);
      }
      const count = (status: ChainVerdict['status']) =>
        result.chains.filter((c) => c.status === status).length;
      this.log(
        `${result.chains.length} chain${result.chains.length === 1 ? '' : 's'}: ${count('intact')} intact, ${count('broken')} broken, ${count('unanchored')} unanchored, ${count('empty')} without reports`,
      );
    }
    process.exitCode = verifyReportsExitCode(result.chains);
    return { schema: 'fleet.report-verify/v1', ...result };
  }
}

function schedulesOf(verb: string | undefined): ReportChainSchedule[] {
  if (verb === undefined) return [...REPORT_CHAIN_SCHEDULES];
  if ((REPORT_CHAIN_SCHEDULES as readonly string[]).includes(verb))
    return [verb as ReportChainSchedule];
  throw new FleetError(
    'USAGE',
    `${JSON.stringify(verb)} is not a report schedule: drift or version (or neither, for both)`,
  );
}
