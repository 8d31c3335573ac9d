import { Args, Flags } from '@fleet/core/command';
import type { DomainPlan } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import { loadFleetContext } from '@fleet/operator/config/context.js';
import {
  readLiveThroughController,
  readSnapshotThroughController,
} from '@fleet/operator/config/live.js';
import { renderPlan } from '@fleet/operator/config/render.js';

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
    const registry = await this.loadRegistry();
    const context = await loadFleetContext({ root, registry, timeoutMs: flags.timeout });
    await this.noteSource(context.source);
    core.hostEntry(context.repo, args.host);
    const assessment = await core.prepareAssessment({
      repo: context.repo,
      git: context.git,
      source: context.source,
      domains: context.domains,
      domainFilter: args.domain === undefined ? undefined : [args.domain],
      readLive: readLiveThroughController(context),
      // The domain's derived layer (the router's volume) is planned too, in the same request.
      probers: await core.loadDomainProbers(registry, [...context.domains.keys()]),
      readSnapshot: readSnapshotThroughController(context),
    });
    const plans = await core.planHost(assessment, args.host, args.domain);
    const palette = await this.palette();
    if (!this.jsonEnabled())
      this.log(plans.map((plan) => renderPlan(plan, core.escapeControl, palette)).join('\n\n'));
    // A node that cannot serve the domain: its refusal, exit 7 (DOMAIN_NOT_SERVED, POLICY_REFUSED).
    const refusal = core.planRefusal(plans);
    if (refusal !== undefined) throw refusal;
    return { plans };
  }
}
