import { Flags } from '@fleet/core/command';
import { labRestart, type LabRestartResult } from '@fleet/lab';
import { FleetCommand } from '../../base-command.js';

export default class LabRestart extends FleetCommand {
  static override summary = "Restart a running lab's controllers (a linked plugin's new build).";
  static override description = `Each lab node's supervisor stops its controller and starts it again, on the same port with the same flags; the command returns once every new controller accepts requests. A fresh controller imports the plugins linked into your CLI (fleet plugins link) anew from their folders, so this is how a lab picks up a plugin you rebuilt (docs/plugin-authoring.md, "The dev loop"). A controller that does not come back fails the command, naming the host, with the end of its log. A lab of systemd units (--supervisor systemd-user) is restarted with systemctl --user restart.`;
  static override examples = [
    '<%= config.bin %> lab restart',
    '<%= config.bin %> lab restart --dir /tmp/lab --host node-01 --json',
  ];
  static override flags = {
    dir: Flags.directory({ description: 'the lab directory', default: '.fleet-lab' }),
    host: Flags.string({ description: 'restart only this host (repeatable)', multiple: true }),
  };

  async run(): Promise<LabRestartResult> {
    const { flags } = await this.parse(LabRestart);
    const result = await labRestart({ dir: flags.dir, hosts: flags.host ?? [] });
    for (const host of result.hosts) this.log(`Restarted ${host.name}: controller pid ${host.pid}`);
    return result;
  }
}
