import { Args, Flags } from '@fleet/core/command';
import type { DomainPlan } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import { escapeControl } from '@fleet/core';
import { ConfigPlanService, renderPlan } from '@fleet/operator/config-plan';

export default class ConfigPlan extends FleetCommand {
  static override summary =
    'Show what an install would do on a host: classification, diff, coupled actions.';
  static override description =
    'Reads fleet.yaml, hosts/ and domains/ as committed at HEAD (uncommitted changes are not used; a warning names them). Per file: its classification against its known versions (current, stale, modified, diverged, missing, deleted: see `fleet drift --help`), the redacted unified diff, the live sha256 the plan was made against (an install refuses if it changed since), and the process actions the domain couples to the write. Reads the node; writes nothing. A node that cannot serve the domain (no plugin provides it, its node policy does not list it or refuses a path) exits 7 with its refusal (DOMAIN_NOT_SERVED, POLICY_REFUSED).';
  static override examples = [
    '<%= config.bin %> config plan node-01',
    '<%= config.bin %> config plan node-01 harness-policy --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'commit' as const; // on the commit line
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
    domain: Args.string({ description: 'one domain (default: every domain the host runs)' }),
  };
  static override flags = {
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 10_000, min: 1 }),
  };

  async run(): Promise<{ plans: DomainPlan[] }> {
    const { args, flags } = await this.parse(ConfigPlan);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(ConfigPlanService);
    const { plans, refusal } = await service.run({
      root,
      host: args.host,
      ...(args.domain === undefined ? {} : { domain: args.domain }),
      timeoutMs: flags.timeout,
      onSource: (source) => this.noteSource(source),
    });
    const palette = await this.palette();
    if (!this.jsonEnabled())
      this.log(plans.map((plan) => renderPlan(plan, escapeControl, palette)).join('\n\n'));
    // A node that cannot serve the domain: its refusal, exit 7 (DOMAIN_NOT_SERVED, POLICY_REFUSED).
    if (refusal !== undefined) throw refusal;
    return { plans };
  }
}
