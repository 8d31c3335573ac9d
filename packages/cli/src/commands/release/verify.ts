import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import * as path from 'node:path';
import { ReleaseService } from '@fleet/operator/release';

export default class ReleaseVerify extends FleetCommand {
  static override summary = 'Rebuild a pinned release from its commit and compare the bytes.';
  static override description = `Reads the artifact fleet.yaml pins for VERSION (default: canonicalVersion), checks that the fleet checkout this CLI runs from is at the commit its build record names with a clean tree, packs it again with the plugins fleet.yaml pins, and compares the sha256 with the pin. Exit 0 when byte-identical; 6 (VERIFICATION_FAILED) when not, naming the entries that differ; 3 when the checkout is not at that commit. --restore writes the rebuild into the artifact store when the store lacks it (a fresh clone) or holds other bytes. The Node.js builds the release ships are checked in the store against their sha256 and npm integrity (the registry's dist.integrity): one holding other bytes fails (exit 6), a missing one is named with how to fetch it.`;
  static override examples = [
    '<%= config.bin %> release verify',
    '<%= config.bin %> release verify 0.2.0 --restore',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    version: Args.string({ description: 'the pinned version (default: canonicalVersion)' }),
  };
  static override flags = {
    restore: Flags.boolean({
      description: 'put the proven rebuild into the artifact store when it is missing there',
      default: false,
    }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { args, flags } = await this.parse(ReleaseVerify);
    const service = await this.service(ReleaseService);
    const result = await service.verify({
      root: await this.findRepo(flags.repo),
      checkout: path.resolve(this.config.root, '..', '..'),
      ...(args.version === undefined ? {} : { version: args.version }),
      restore: flags.restore,
      progress: (line) => this.note(line),
    });
    this.log(
      `${result.version}: rebuilt from ${result.commit}, byte-identical to the pin (sha256 ${result.sha256}); store ${result.store}${result.restored ? ', restored from the rebuild' : ''}.`,
    );
    for (const node of result.nodes) {
      this.log(
        node.store === 'held'
          ? `  Node.js ${node.version} for ${node.platform}: held, the pinned bytes${node.integrity === undefined ? '' : ` (npm integrity ${node.integrity})`}`
          : `  Node.js ${node.version} for ${node.platform}: missing from the store (npm pack node-${node.platform}@${node.version}, then move the tarball to ${node.file}: its sha256 and integrity are checked here)`,
      );
    }
    return { ...result };
  }
}
