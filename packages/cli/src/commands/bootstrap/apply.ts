import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { acceptanceTimeoutFlag } from '../../runtime-flags.js';
import * as core from '@fleet/core';
import { BootstrapService, renderBootstrapPlan } from '@fleet/operator/bootstrap';

export default class BootstrapApply extends FleetCommand {
  static override summary = 'Apply a bootstrap plan (with --confirm).';
  static override description = `The plan is derived again and must be unchanged (else exit 3: review a new plan); a plan file edited after it was written is refused the same way. The node must allow bootstrap in its own node policy (bootstrap.allow in ~/.config/fleet/node-policy.yaml, written on the node: docs/node-policy.md) and the operator's token for the host needs node-admin:bootstrap.

A reachable node goes through its controller: the artifact is uploaded (unless the node already holds its generation, which it verifies again), staged, activated, the runtime restarted under its supervisor and accepted — or rolled back to the prior generation and verified. Only with --recover, for a plan whose route is ssh (the controller does not answer), is the bundle (plan and artifact: no credentials, no policy) sent over SSH to the node's fixed receiver command, after the host key was checked against the pinned hostKey.

The controller is installed to listen where the plan says (fleet.yaml's controller URL); for https the node makes its own certificate (the key never leaves it), and one that is not the certificate fleet.yaml pins stops the apply before anything is activated (exit 4, naming the fingerprint to pin). After the node accepted the new runtime, it is accepted again from here, at fleet.yaml's URL. A runtime that did not come up is reported with its controller's last log lines.

Without --confirm it prints the plan and exits 2. Exit 0 when accepted; 6 after a verified rollback, when manual recovery is required, or when the node accepted a runtime fleet.yaml's URL does not reach.`;
  static override examples = [
    '<%= config.bin %> bootstrap apply node-01.plan.json --confirm',
    '<%= config.bin %> bootstrap apply node-01.plan.json --confirm --recover',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    plan: Args.file({ description: 'the plan file', required: true, exists: true }),
  };
  static override flags = {
    confirm: Flags.boolean({ description: 'really apply', default: false }),
    recover: Flags.boolean({
      description: 'the controller is unavailable: use the SSH recovery receiver',
      default: false,
    }),
    'acceptance-timeout': acceptanceTimeoutFlag('new'),
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 120_000,
      min: 1,
    }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { args, flags } = await this.parse(BootstrapApply);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(BootstrapService);
    const applied = await service.apply({
      root,
      planFile: args.plan,
      confirm: flags.confirm,
      recover: flags.recover,
      acceptanceTimeoutMs: flags['acceptance-timeout'] * 1000,
      timeoutMs: flags.timeout,
      onProgress: (line) => this.note(`  ${line}`),
    });
    const { plan } = applied;
    if (!applied.confirmed) {
      if (!this.jsonEnabled()) this.log(renderBootstrapPlan(plan));
      this.note(
        `not applied: run again with --confirm${plan.route === 'ssh' ? ' --recover' : ''} to bootstrap ${plan.host}`,
      );
      process.exitCode = core.ExitCode.usage;
      return { plan, confirmed: false };
    }
    const { transaction, outcome, status } = applied;
    if (!this.jsonEnabled())
      this.log(
        `${plan.host}: bootstrap ${plan.id.slice(0, 12)} accepted (transaction ${transaction})`,
      );
    return { plan: plan.id, host: plan.host, transaction, outcome, status };
  }
}
