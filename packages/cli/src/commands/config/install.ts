import { Args, Flags } from '@oclif/core';
import type { DomainPlan, Receipt } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';

export default class ConfigInstall extends FleetCommand {
  static override summary = "Make a host's domain look like the repository (with --confirm).";
  static override description = `Plans first, then asks the node to install exactly what was planned: each file is written only if its live sha256 still equals the one planned against (else exit 3, nothing written), after a dated backup, by an atomic durable replace, followed by the domain's coupled actions and a verification. Prints the receipt.

What the node runs is its own decision: the install names the node policy action ids fleet.yaml gives (domains.<domain>.reload), never an argv; a node that does not serve the domain (DOMAIN_NOT_SERVED), or whose policy does not define the action or accept a path (POLICY_REFUSED), refuses with exit 7 before writing (docs/node-policy.md).

Without --confirm it prints the plan and exits 2. A diverged file (local lines found in no published version) is refused with exit 7 unless --force; adopt it first with \`fleet config adopt\` if the local lines are worth keeping.`;
  static override examples = [
    '<%= config.bin %> config install node-01 harness-policy',
    '<%= config.bin %> config install node-01 harness-policy --confirm',
    '<%= config.bin %> config install node-01 harness-policy --file ~/.claude/CLAUDE.md --confirm --force',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
    domain: Args.string({ description: 'domain to install', required: true }),
  };
  static override flags = {
    file: Flags.string({ description: 'only this node path (repeatable)', multiple: true }),
    confirm: Flags.boolean({
      description: 'really install (without it: print the plan, exit 2)',
      default: false,
    }),
    force: Flags.boolean({ description: 'overwrite diverged files', default: false }),
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 30_000, min: 1 }),
  };

  async run(): Promise<
    { plan: DomainPlan; receipt: Receipt } | { plan: DomainPlan; confirmed: false }
  > {
    const { args, flags } = await this.parse(ConfigInstall);
    const root = await this.findRepo(flags.repo);
    const core = await import('@fleet/core');
    const { loadFleetContext } = await import('../../config/context.js');
    const { readLiveThroughController } = await import('../../config/live.js');
    const { renderPlan, renderReceipt } = await import('../../config/render.js');
    const registry = await this.loadRegistry();
    const context = await loadFleetContext({
      root,
      registry,
      domains: [args.domain],
      timeoutMs: flags.timeout,
    });
    const assessment = await core.prepareAssessment({
      repo: context.repo,
      git: context.git,
      domains: context.domains,
      domainFilter: [args.domain],
      readLive: readLiveThroughController(context),
    });
    const [plan] = await core.planHost(assessment, args.host, args.domain);
    if (!plan)
      throw new core.FleetError('UNKNOWN_DOMAIN', `no plan for ${args.domain} on ${args.host}`);
    const selection = { ...(flags.file ? { files: flags.file } : {}), force: flags.force };
    if (!flags.confirm) {
      // The plan is the answer: shown, nothing sent, exit 2 (contract §7).
      if (!this.jsonEnabled()) this.log(renderPlan(plan, core.escapeControl));
      let refusal: string | undefined;
      try {
        core.plannedInstall(plan, selection);
      } catch (error) {
        refusal = core.asFleetError(error).message;
      }
      this.note(
        refusal
          ? `would be refused: ${refusal}`
          : `not installed: run again with --confirm to install ${args.domain} on ${args.host}`,
      );
      process.exitCode = core.ExitCode.usage;
      return { plan, confirmed: false };
    }
    let planned;
    try {
      planned = core.plannedInstall(plan, selection);
    } catch (error) {
      // A refusal is a verb the operator ran: it goes into the operator's log too.
      const failure = core.asFleetError(error);
      await core.recordOperatorVerb({
        verb: 'config install',
        host: args.host,
        domain: args.domain,
        paths: plan.files.map((file) => file.path),
        outcome: 'refused',
        code: failure.code,
        exitCode: failure.exitCode,
        detail: failure.message,
      });
      throw error;
    }
    const runtime = context.domains.get(args.domain);
    if (!runtime?.installer) {
      throw new core.FleetError(
        'DOMAIN_BEHAVIOUR_ABSENT',
        `domain ${args.domain} has no installer: its plugin declares the domain but cannot install it yet`,
      );
    }
    const operationId = core.newOperationId();
    // The domain's host variables and derived paths for this host; its reload is an action id of
    // the node's policy (fleet.yaml domains.<d>.reload): the node decides what that runs.
    const parameters = core.installParameters(context.repo, args.host, runtime.declaration);
    const actions = core.installActions(context.repo, runtime.declaration);
    const paths = planned.files.map((file) => file.path);
    let receipt: Receipt;
    try {
      receipt = await context.client(args.host).install({
        operationId,
        domain: args.domain,
        files: planned.files.map((file) => ({ ...file })),
        parameters,
        ...(Object.keys(actions).length > 0 ? { actions } : {}),
      });
      // A coupled restart of the controller itself (transport-identity) answers before it
      // happens: poll the node until the restarted controller settles the operation, then
      // check its identity (contract §10.2).
      if (core.hasPendingActions(receipt)) {
        receipt = await core.settlePendingInstall(context.client(args.host), receipt, {
          ...(parameters['node_id'] === undefined ? {} : { expectNodeId: parameters['node_id'] }),
          onWait: (line) => this.note(line),
        });
      }
    } catch (error) {
      const failure = core.asFleetError(error);
      await core.recordOperatorVerb({
        verb: 'config install',
        host: args.host,
        operationId,
        domain: args.domain,
        paths,
        outcome: failure.code === 'HOST_UNREACHABLE' ? 'unreachable' : 'failed',
        code: failure.code,
        exitCode: failure.exitCode,
        detail: failure.message,
      });
      throw error;
    }
    await core.recordOperatorVerb({
      verb: 'config install',
      host: args.host,
      operationId,
      domain: args.domain,
      paths,
      outcome:
        receipt.outcome === 'unchanged'
          ? 'unchanged'
          : receipt.outcome === 'installed'
            ? 'ok'
            : 'failed',
      code: receipt.error?.code ?? null,
      exitCode: receipt.outcome === 'rolled-back' ? 6 : 0,
      detail: `${receipt.outcome}, verified: ${receipt.verified}`,
    });
    if (!this.jsonEnabled()) this.log(renderReceipt(receipt, core.escapeControl));
    if (receipt.outcome === 'rolled-back' || !receipt.verified)
      process.exitCode = core.ExitCode.verification;
    return { plan, receipt };
  }
}
