import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { HostRemoveService } from '@fleet/operator/host-remove';

export default class HostRemove extends FleetCommand {
  static override summary =
    'Take a host out of the fleet: stop its controller, revoke your tokens, drop it from fleet.yaml.';
  static override description = `Over SSH with the host key fleet.yaml pins: stops and disables fleet-controller.service and revokes every token issued to you for the host (client operator-NAME); then removes the host from fleet.yaml and hosts/NAME.yaml (committed) and from your credentials file. The files fleet managed there, the node's state, audit log and runtime generations stay on the machine. Without --confirm it only says what it would do.`;
  static override examples = ['<%= config.bin %> host remove beta --confirm'];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    name: Args.string({ description: 'the host name in fleet.yaml', required: true }),
  };
  static override flags = {
    identity: Flags.file({
      description: 'your SSH private key (default: the agent, then ~/.ssh/id_*)',
    }),
    confirm: Flags.boolean({ description: 'really remove the host', default: false }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { args, flags } = await this.parse(HostRemove);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(HostRemoveService);
    const result = await service.run({
      root,
      name: args.name,
      ...(flags.identity === undefined ? {} : { identity: flags.identity }),
      confirm: flags.confirm,
      progress: (line) => this.note(line),
    });
    if (result.outcome === 'planned') {
      this.log(
        `host remove ${result.host}: would stop and disable its controller over SSH, revoke your tokens there, and remove it from fleet.yaml and your credentials file; its managed files stay. Run again with --confirm.`,
      );
    } else {
      this.log(
        `${result.host} removed (commit ${result.commit?.slice(0, 12)}); its managed files were left in place.`,
      );
    }
    return { ...result };
  }
}
