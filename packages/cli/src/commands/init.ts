import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../base-command.js';
import { scaffoldFleetRepo } from '@fleet/core';

export interface InitResult {
  readonly root: string;
  readonly commit: string;
  readonly files: readonly string[];
}

export default class Init extends FleetCommand {
  static override summary = 'Create a new fleet repository.';
  static override description =
    'A git repository with a valid fleet.yaml, hosts/ with one example host, the example files of every registered domain under domains/, a .gitignore for what schedules write (reports/drift/, reports/version/, reports/runs.log: evidence, never your change), and a first commit. DIR must not exist or be empty.';
  static override examples = [
    '<%= config.bin %> init my-fleet',
    '<%= config.bin %> init my-fleet --no-example-host   # hosts come from fleet host add',
    '<%= config.bin %> init --json',
  ];
  static override flags = {
    'example-host': Flags.boolean({
      description:
        'add the example host node-01 (--no-example-host: none; add hosts with fleet host add)',
      default: true,
      allowNo: true,
    }),
  };
  static override args = {
    dir: Args.directory({ description: 'where to create the repository', default: '.' }),
  };

  async run(): Promise<InitResult> {
    const { args, flags } = await this.parse(Init);
    const registry = await this.loadRegistry();
    const result = await scaffoldFleetRepo({
      dir: args.dir,
      ...(flags['example-host'] ? {} : { exampleHost: null }),
      domains: registry.domains().map((entry) => entry.descriptor),
    });
    this.log(
      `Created a fleet repository in ${result.root} (commit ${result.commit.slice(0, 12)}).`,
    );
    this.log(
      flags['example-host']
        ? `Next: fleet validate --repo ${result.root}`
        : 'Next: pin a runtime (fleet release), then fleet host add NAME --ssh USER@HOST (docs/getting-started.md)',
    );
    return { root: result.root, commit: result.commit, files: result.files };
  }
}
