import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { realpath } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { FleetError } from '@fleet/core';
import { enrollNode } from '@fleet/controller';

/**
 * The node's half of `fleet host add` (contract §12.1): `fleet host add` runs it over its SSH
 * session from the artifact it uploaded, with the enrollment request on stdin, and reads the
 * answer — the operator's new token among it, shown once — from stdout. Not run by hand.
 */
export default class ControllerEnroll extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary = 'Enroll this node (run by `fleet host add` over SSH, not by hand).';
  static override description = `Reads a fleet.enroll/v1 request on stdin (the bootstrap plan, the node policy, the operator's token to issue, the recovery key's authorized_keys line), checks it and the artifact, then writes the policy, makes the controller's TLS key and certificate here, issues the token and stages the artifact as a bootstrap transaction whose runner starts the controller once this process has ended. Prints one JSON answer on stdout.`;
  static override flags = {
    home: Flags.directory({ required: true, exists: true, description: "the node's home" }),
    artifact: Flags.file({
      required: true,
      exists: true,
      description: 'the runtime artifact the plan names (its sha256 is checked)',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ControllerEnroll);
    const raw = await text(process.stdin);
    let request: unknown;
    try {
      request = JSON.parse(raw);
    } catch {
      throw new FleetError('BAD_REQUEST', 'the enrollment request on stdin is not JSON');
    }
    const result = await enrollNode({
      home: await realpath(flags.home),
      artifactFile: await realpath(flags.artifact),
      request,
      registry: await this.loadRegistry(),
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
}
