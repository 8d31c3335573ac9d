import { FleetCommand } from '../base-command.js';
import * as core from '@fleet/core';

export default class CompleteHosts extends FleetCommand {
  static override hidden = true;
  static override summary = "The hosts of fleet.yaml, one a line: shell completion's list.";
  static override description = `Run by the completion fleet autocomplete installs (bash: the value of --host and a HOST argument), not by you. The hosts of fleet.yaml as committed at HEAD — what drift, plan and install read — from --repo, $FLEET_REPO or the working directory. Without a fleet repository it fails as every verb does, on stderr, and the completion offers nothing.`;
  static override examples = ['<%= config.bin %> complete-hosts --repo ~/fleet'];
  static override repoLine = 'none' as const;
  static override baseFlags = { ...FleetCommand.repoFlags };

  async run(): Promise<{ hosts: string[] }> {
    const { flags } = await this.parse(CompleteHosts);
    const root = await this.findRepo(flags.repo);
    const { repo } = await core.loadRepoAtHead(root, core.createGit(root));
    const hosts = Object.keys(repo.manifest.hosts).sort();
    if (!this.jsonEnabled()) this.log(hosts.join('\n'));
    return { hosts };
  }
}
