import { Args, Flags } from '@fleet/core/command';
import type { DomainPlan, Receipt } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import { ConfigInstallService, renderPlan, renderReceipt } from '@fleet/operator/config-install';

export default class ConfigInstall extends FleetCommand {
  static override summary = "Make a host's domain look like the repository (with --confirm).";
  static override description = `Plans first, then asks the node to install exactly what was planned: each file is written only if its live sha256 still equals the one planned against (else exit 3, nothing written), after a dated backup, by an atomic durable replace, followed by the domain's coupled actions and a verification. Prints the receipt.

What the node runs is its own decision: the install names the node policy action ids fleet.yaml gives (domains.<domain>.reload), never an argv; a node that does not serve the domain (DOMAIN_NOT_SERVED), or whose policy does not define the action or accept a path (POLICY_REFUSED), refuses with exit 7 before writing (docs/node-policy.md).

Reads fleet.yaml, hosts/ and domains/ as committed at HEAD (uncommitted changes are not used; a warning names them). Without --confirm it prints the plan and exits 2. A hand change is refused with exit 7 unless --force: diverged (lines in no known version: DIVERGED), modified (every line known, the whole not: MODIFIED), deleted (fleet wrote it there and someone removed it: DELETED). The refusal names the ways out: keep the host's version with \`fleet config adopt HOST PATH\` (\`--promote\` also makes it the canonical, so the host is current), or overwrite it with --force (for a deleted file, --force recreates it).`;
  static override examples = [
    '<%= config.bin %> config install node-01 harness-policy',
    '<%= config.bin %> config install node-01 harness-policy --confirm',
    "<%= config.bin %> config install node-01 harness-policy --file '~/.claude/CLAUDE.md' --confirm --force",
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'commit' as const; // on the commit line
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
    domain: Args.string({ description: 'domain to install', required: true }),
  };
  static override flags = {
    file: Flags.string({
      description: "only this node path, ~/-relative (repeatable; quote it: '~/…')",
      multiple: true,
    }),
    confirm: Flags.boolean({
      description: 'really install (without it: print the plan, exit 2)',
      default: false,
    }),
    force: Flags.boolean({
      description: 'overwrite diverged and modified files, recreate deleted ones',
      default: false,
    }),
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 30_000, min: 1 }),
  };

  async run(): Promise<
    { plan: DomainPlan; receipt: Receipt } | { plan: DomainPlan; confirmed: false }
  > {
    const { args, flags } = await this.parse(ConfigInstall);
    const files = flags.file
      ? await Promise.all(flags.file.map((file) => this.nodePath(file)))
      : undefined;
    const root = await this.findRepo(flags.repo);
    const palette = await this.palette();
    const service = await this.service(ConfigInstallService);
    const outcome = await service.run({
      root,
      host: args.host,
      domain: args.domain,
      ...(files ? { files } : {}),
      confirm: flags.confirm,
      force: flags.force,
      timeoutMs: flags.timeout,
      onSource: (source) => this.noteSource(source),
      onWait: (line) => this.note(line),
    });
    const { plan } = outcome;
    if ('confirmed' in outcome) {
      // The plan is the answer: shown, nothing sent, exit 2 (contract §7).
      if (!this.jsonEnabled()) this.log(renderPlan(plan, core.escapeControl, palette));
      this.note(
        outcome.refusal
          ? `would be refused: ${outcome.refusal}`
          : `not installed: run again with --confirm to install ${args.domain} on ${args.host}`,
      );
      process.exitCode = core.ExitCode.usage;
      return { plan, confirmed: false };
    }
    const { receipt } = outcome;
    if (!this.jsonEnabled())
      this.log(renderReceipt(receipt, core.escapeControl, args.host, palette));
    if (receipt.outcome === 'rolled-back' || !receipt.verified)
      process.exitCode = core.ExitCode.verification;
    return { plan, receipt };
  }
}
