import { Args, Flags } from '@fleet/core/command';
import type { BootstrapPlan } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import { BootstrapService, renderBootstrapPlan } from '@fleet/operator/bootstrap';

export default class BootstrapPlanCommand extends FleetCommand {
  static override summary = "Plan a host's runtime bootstrap (read-only).";
  static override description = `Binds everything the bootstrap depends on: host, expected node id, platform, supervisor adapter, the artifact's identity (sha256, version, and the commit its build record names — fleet.yaml's commit for it must be that one, else exit 2; it must carry every plugin fleet.yaml names, as pinned, else exit 2), the prior generation observed on the node, the repo commit, the protocol version, the expected catalog and where the new controller listens (fleet.yaml's controller URL: bind address, port, TLS with the pinned fingerprint, the Host names it accepts). The plan's id is the sha256 of its canonical form; \`fleet bootstrap apply\` derives the plan again and refuses any difference (exit 3).

The node is observed through its controller; when the controller does not answer, through the SSH recovery receiver (fleet.yaml hosts.<host>.ssh with a pinned hostKey, and the private key's path in the credentials file) — then the plan's route is ssh and apply needs --recover. Writes nothing but --out.`;
  static override examples = [
    '<%= config.bin %> bootstrap plan node-01 --out node-01.plan.json',
    '<%= config.bin %> bootstrap plan node-01 --artifact artifacts/fleet-1.2.0.tgz --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = { host: Args.string({ description: 'the host', required: true }) };
  static override flags = {
    artifact: Flags.string({
      description: "the runtime tarball (default: fleet.yaml's artifact for canonicalVersion)",
    }),
    out: Flags.string({ description: 'write the plan to this file (never over an existing one)' }),
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 30_000,
      min: 1,
    }),
  };

  // The JSON is the sealed plan itself, which `bootstrap apply` reads back strictly.
  static override repositoryInJson = false;

  async run(): Promise<BootstrapPlan> {
    const { args, flags } = await this.parse(BootstrapPlanCommand);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(BootstrapService);
    const plan = await service.plan({
      root,
      host: args.host,
      ...(flags.artifact === undefined ? {} : { artifact: flags.artifact }),
      ...(flags.out === undefined ? {} : { out: flags.out }),
      timeoutMs: flags.timeout,
      onNote: (line) => this.note(line),
    });
    if (!this.jsonEnabled()) {
      this.log(renderBootstrapPlan(plan));
      if (flags.out)
        this.log(
          `plan written to ${flags.out}; apply it with: fleet bootstrap apply ${flags.out} --confirm${plan.route === 'ssh' ? ' --recover' : ''}`,
        );
    }
    return plan;
  }
}
