import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';

/**
 * The node's forced SSH command for `bootstrap apply --recover` (contract §12). Not run by hand:
 * `authorized_keys` forces it for the operator's recovery key (see
 * `bootstrap/authorized-keys.ts`), and it serves the one verb the client asked for, read as data
 * from `SSH_ORIGINAL_COMMAND`.
 */
export default class BootstrapReceive extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary = "The node's forced SSH command of the recovery path (not run by hand).";
  static override description = `Installed as the forced command of the operator's recovery key in authorized_keys ("restrict,command=…"). Reads the requested verb only from SSH_ORIGINAL_COMMAND, as data: after trimming it must be exactly one of version, status, apply; anything else exits 2 with a usage error. Every request is logged to <home>/.local/state/fleet/receiver.log (0600). The rest of the environment is ignored.`;
  static override examples = [
    'restrict,command="/usr/bin/node /opt/fleet/bin/run.js bootstrap receive --home /home/fleet" ssh-ed25519 AAAA… fleet-bootstrap',
  ];
  static override flags = {
    home: Flags.directory({
      description: "the node's home (~): node state is under <home>/.local/state/fleet/",
      required: true,
      exists: true,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(BootstrapReceive);
    const path = await import('node:path');
    const { runReceiver } = await import('@fleet/operator/bootstrap/receiver.js');
    process.exitCode = await runReceiver({
      home: path.resolve(flags.home),
      version: this.config.version,
      originalCommand: process.env['SSH_ORIGINAL_COMMAND'],
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      loadRegistry: () => this.loadRegistry(),
    });
  }
}
