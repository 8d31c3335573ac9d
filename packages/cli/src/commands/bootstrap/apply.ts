import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { acceptanceTimeoutFlag } from '../../runtime-flags.js';
import type { ControllerListen, PlannedListen } from '@fleet/core';

/** A plan's listen as the stage sends it, and the pin the node's certificate must match. */
function listenAndPin(planned: PlannedListen): {
  listen: ControllerListen;
  pinned: string | null;
} {
  const { fingerprint, ...listen } = planned;
  return { listen, pinned: fingerprint };
}

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
    const core = await import('@fleet/core');
    const { readFile } = await import('node:fs/promises');
    const { loadHostRuntime } = await import('@fleet/operator/runtime/host.js');
    const { derivePlan } = await import('@fleet/operator/runtime/bootstrap-plan.js');
    const { renderBootstrapPlan } = await import('@fleet/operator/runtime/render.js');
    const plan = core.readPlan(
      core.parseStrictJson(await readFile(args.plan, 'utf8'), args.plan, 'USAGE'),
      args.plan,
    );
    const host = await loadHostRuntime(root, plan.host, { timeoutMs: flags.timeout });
    const derived = await derivePlan(host, plan.artifact.file);
    const again = core.sealPlan(derived.body);
    if (again.id !== plan.id) {
      const { id: _old, ...before } = plan;
      const { id: _new, ...after } = again;
      throw new core.FleetError(
        'PLAN_MISMATCH',
        `the plan changed since ${args.plan} was written (${core.planDifferences(before, after).join(', ')}); nothing was applied`,
        {
          suggestions: [`review a new plan: fleet bootstrap plan ${plan.host} --out NEW.plan.json`],
        },
      );
    }
    if (!flags.confirm) {
      if (!this.jsonEnabled()) this.log(renderBootstrapPlan(plan));
      this.note(
        `not applied: run again with --confirm${plan.route === 'ssh' ? ' --recover' : ''} to bootstrap ${plan.host}`,
      );
      process.exitCode = core.ExitCode.usage;
      return { plan, confirmed: false };
    }
    const acceptanceTimeoutMs = flags['acceptance-timeout'] * 1000;
    const { recordRuntimeVerb } = await import('@fleet/operator/runtime/record.js');
    let transaction: string;
    let verdict: import('@fleet/core').TransactionVerdict;
    let status: import('@fleet/core').RuntimeStatusResponse | null;
    let runnerDied: string | undefined;
    let answered = false;
    if (plan.route === 'controller') {
      const { applyThroughController } = await import('@fleet/operator/runtime/apply.js');
      const { followableOnInterrupt } = await import('@fleet/operator/runtime/interrupt.js');
      const applied = await followableOnInterrupt(plan.host, () =>
        applyThroughController({
          client: host.client,
          kind: 'bootstrap',
          supervisor: plan.supervisor,
          planId: plan.id,
          target: plan.target,
          artifact: derived.artifact,
          acceptanceTimeoutMs,
          onProgress: (line) => this.note(`  ${line}`),
          // The status the plan was derived from lists the generations the node holds: a held
          // artifact is not uploaded again (contract §12).
          ...(derived.observation.through === 'controller'
            ? { held: derived.observation.status.generations }
            : {}),
          // fleet.yaml's controller URL and pin, as the plan bound them (issue 35).
          ...(plan.listen ? listenAndPin(plan.listen) : {}),
        }),
      );
      ({ transaction, verdict, status, runnerDied, answered = false } = applied);
    } else {
      if (!flags.recover) {
        throw new core.FleetError(
          'HOST_UNREACHABLE',
          `${plan.host}'s controller does not answer: the plan's route is the SSH recovery receiver, which runs only with --recover`,
        );
      }
      const { applyOverSsh } = await import('@fleet/operator/runtime/recover.js');
      ({ transaction, verdict, status } = await applyOverSsh({
        host,
        plan,
        artifact: derived.artifact,
        acceptanceTimeoutMs,
        onProgress: (line) => this.note(`  ${line}`),
      }));
    }
    await recordRuntimeVerb('bootstrap apply', plan.host, transaction, verdict);
    if (!verdict.done) {
      const { unfinished } = await import('@fleet/operator/runtime/follow.js');
      throw await unfinished(plan.host, transaction, status, undefined, runnerDied, answered);
    }
    if (verdict.error) throw verdict.error;
    if (!this.jsonEnabled())
      this.log(
        `${plan.host}: bootstrap ${plan.id.slice(0, 12)} accepted (transaction ${transaction})`,
      );
    return { plan: plan.id, host: plan.host, transaction, outcome: verdict.outcome, status };
  }
}
