import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import * as path from 'node:path';
import { BootstrapReceiverService } from '@fleet/operator/bootstrap-receive';

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
  static override description = `Installed as the forced command of the operator's recovery key in authorized_keys ("restrict,command=…"). Reads the requested verb only from SSH_ORIGINAL_COMMAND, as data: after trimming it must be exactly one of version, status, apply; anything else exits 2 with a usage error. Every request is logged to <home>/.local/state/fleet/receiver.log (0600); apply's stage and activate, their refusals and every refused request are also recorded in the node's hash-chained audit log (fleet audit show), the caller named ssh:<--key> or ssh:forced-command. The rest of the environment is ignored. Before serving a verb it asks the sshd that runs it (sshd -T, its own -f, a throwaway host key) and refuses with SSH_ENVIRONMENT_UNSAFE (exit 7) when PermitUserEnvironment is not no, when AcceptEnv lets the client send PATH, NODE_OPTIONS, LD_PRELOAD or the like, or when that cannot be told.`;
  static override examples = [
    'restrict,command="/usr/bin/node /opt/fleet/bin/run.js bootstrap receive --home /home/fleet" ssh-ed25519 AAAA… fleet-bootstrap',
  ];
  static override flags = {
    home: Flags.directory({
      description: "the node's home (~): node state is under <home>/.local/state/fleet/",
      required: true,
      exists: true,
    }),
    key: Flags.string({
      description:
        'the SHA256 fingerprint of the key this line is forced for (SHA256:…, as ssh-keygen -l prints it): the audit log names the caller ssh:<fingerprint>, else ssh:forced-command',
      parse: (value) => {
        if (!/^SHA256:[A-Za-z0-9+/]{43}$/.test(value)) {
          return Promise.reject(
            new Error(
              `--key must be a SHA256 key fingerprint (SHA256:…), not ${JSON.stringify(value)}`,
            ),
          );
        }
        return Promise.resolve(value);
      },
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(BootstrapReceive);
    const service = await this.service(BootstrapReceiverService);
    process.exitCode = await service.run({
      home: path.resolve(flags.home),
      version: this.config.version,
      originalCommand: process.env['SSH_ORIGINAL_COMMAND'],
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      ...(flags.key === undefined ? {} : { keyFingerprint: flags.key }),
    });
  }
}
