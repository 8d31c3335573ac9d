import { Args } from '@fleet/core/command';
import { FleetCommand } from '../base-command.js';

export interface InitResult {
  readonly root: string;
  readonly commit: string;
  readonly files: readonly string[];
}

export default class Init extends FleetCommand {
  static override summary = 'Create a new fleet repository.';
  static override description =
    'A git repository with a valid fleet.yaml, hosts/ with one example host, the example files of every registered domain under domains/, and a first commit. DIR must not exist or be empty.';
  static override examples = ['<%= config.bin %> init my-fleet', '<%= config.bin %> init --json'];
  static override args = {
    dir: Args.directory({ description: 'where to create the repository', default: '.' }),
  };

  async run(): Promise<InitResult> {
    const { args } = await this.parse(Init);
    const registry = await this.loadRegistry();
    const { scaffoldFleetRepo } = await import('@fleet/core');
    const result = await scaffoldFleetRepo({
      dir: args.dir,
      domains: registry.domains().map((entry) => entry.descriptor),
    });
    this.log(
      `Created a fleet repository in ${result.root} (commit ${result.commit.slice(0, 12)}).`,
    );
    this.log(`Next: fleet validate --repo ${result.root}`);
    return { root: result.root, commit: result.commit, files: result.files };
  }
}
