import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import * as path from 'node:path';
import { classifyJob, parseEvery, ScheduleService } from '@fleet/operator/schedule';

export interface ScheduleInstallJson {
  readonly schema: 'fleet.schedule/v1';
  readonly name: string;
  readonly platform: string;
  readonly every: string;
  readonly files: string[];
  readonly command: string[];
  readonly supervisor: string[][];
}

export default class ScheduleInstall extends FleetCommand {
  static override summary =
    'Run a read-only report on a timer (systemd user timer, launchd agent or scheduled task).';
  static override description = `Installs, for this seat's platform, a timer that runs \`fleet drift\` or \`fleet version\` against the repository every DURATION and writes the report set into the repository's reports/<verb>/<YYYY-MM-DD>/ (UTC date of the run; an earlier report of the same day is never overwritten). The timer runs the hidden \`fleet report-run VERB --repo DIR\`, which computes the dated folder when it runs and appends one line per run (time, verb, exit code, the report file or the error) to the repository's reports/runs.log. Each report is a link of its schedule's chain (fleet schedule verify). Reports and runs.log are git-ignored (fleet init commits the lines in .gitignore; an older repository gets them in .git/info/exclude): they never show up as your changes. The unit carries FLEET_CREDENTIALS (the credentials file's path, never a token) and XDG_CONFIG_HOME/XDG_STATE_HOME when set. If the supervisor refuses (no user bus, …) the files written are removed again: nothing is left half-installed.

linux: ~/.config/systemd/user/fleet-report-<verb>.{service,timer}, enabled with systemctl --user enable --now (the user manager must linger to run while logged out: loginctl enable-linger). darwin: ~/Library/LaunchAgents/dev.fleet.report-<verb>.plist (RunAtLoad, output in ~/Library/Logs/fleet/). win32: the scheduled task fleet-report-<verb>.

Only read-only reports can be scheduled: any writing verb (config install, config adopt, upgrade, bootstrap apply, …) is refused with exit 7. The one exception is \`harness reconcile --unattended\` (contract §10.3), refused with exit 7 unless fleet.yaml at HEAD sets domains.harness-policy.unattended: allow. Installing the same verb again replaces its schedule.`;
  static override examples = [
    '<%= config.bin %> schedule install drift',
    '<%= config.bin %> schedule install version --every 6h --repo ~/fleet',
    '<%= config.bin %> schedule install harness reconcile --unattended --every 1d',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'none' as const; // it installs a timer here and reads no host
  static override args = {
    verb: Args.string({
      description: 'drift or version (or harness, with reconcile --unattended)',
      required: true,
    }),
    subverb: Args.string({ description: 'the second word of a two-word verb', required: false }),
  };
  static override flags = {
    every: Flags.string({
      description: 'the interval: a whole number with m, h or d (30m, 6h, 1d); at least 5m',
      default: '1d',
    }),
    unattended: Flags.boolean({
      description: 'with harness reconcile only: the §10.3 opt-in unattended convergence',
      default: false,
    }),
  };

  async run(): Promise<ScheduleInstallJson> {
    const { args, flags } = await this.parse(ScheduleInstall);
    const words = [args.verb, ...(args.subverb === undefined ? [] : [args.subverb])];
    // Refused before anything is read or written.
    const job = classifyJob(words, flags.unattended);
    const everySeconds = parseEvery(flags.every);
    const root = path.resolve(await this.findRepo(flags.repo));
    const service = await this.service(ScheduleService);
    const { installed, ignored } = await service.install({
      root,
      job,
      everySeconds,
      cli: [process.execPath, path.join(this.config.root, 'bin', 'run.js')],
      onWarn: (line) => this.warn(line),
      onInstalled: ({ name, every, files }) => {
        this.log(
          `Installed ${name}: every ${every}, ${words.join(' ')} into ${path.join(root, 'reports')}`,
        );
        for (const file of files) this.log(`  ${file}`);
      },
    });
    if (ignored.file !== null)
      this.log(
        `  git now ignores ${ignored.added.join(', ')} (in ${ignored.file}, this checkout only)`,
      );
    return {
      schema: 'fleet.schedule/v1',
      name: installed.name,
      platform: installed.platform,
      every: installed.every,
      files: installed.files,
      command: installed.command,
      supervisor: installed.supervisor,
    };
  }
}
