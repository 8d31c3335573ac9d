import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { acceptanceTimeoutFlag } from '../../runtime-flags.js';
import * as core from '@fleet/core';
import { loadHostRuntime } from '@fleet/operator/runtime/host.js';
import { renderRuntimeStatus } from '@fleet/operator/runtime/render.js';
import { followTransaction, unfinished } from '@fleet/operator/runtime/follow.js';
import { followTimeout } from '@fleet/operator/runtime/apply.js';
import { recordRuntimeVerb } from '@fleet/operator/runtime/record.js';

export default class BootstrapRollback extends FleetCommand {
  static override summary = "Roll a host's runtime back to its prior generation (with --confirm).";
  static override description = `Through the host's controller: an interrupted transaction is finished by rolling it back (or closed, when nothing had been activated); otherwise the node returns to the prior generation of its last accepted transaction. The prior generation must verify (its tree hash); it is restarted under the supervisor and must pass the same acceptance checks, else the node ends in manual-recovery-required with its journal and logs kept. Needs node-admin:bootstrap.

Without --confirm it prints the current state and exits 2. Exit 0 when the rollback was accepted, 6 otherwise.`;
  static override examples = ['<%= config.bin %> bootstrap rollback node-01 --confirm'];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = { host: Args.string({ description: 'the host', required: true }) };
  static override flags = {
    confirm: Flags.boolean({ description: 'really roll back', default: false }),
    'acceptance-timeout': acceptanceTimeoutFlag('prior'),
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 30_000,
      min: 1,
    }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { args, flags } = await this.parse(BootstrapRollback);
    const root = await this.findRepo(flags.repo);
    const host = await loadHostRuntime(root, args.host, { timeoutMs: flags.timeout });
    const before = await host.client.runtimeStatus({ supervisor: host.entry.supervisor });
    if (!flags.confirm) {
      if (!this.jsonEnabled()) this.log(renderRuntimeStatus(args.host, before, 'controller'));
      this.note(`not rolled back: run again with --confirm to roll ${args.host} back`);
      process.exitCode = core.ExitCode.usage;
      return { host: args.host, status: before, confirmed: false };
    }
    const acceptanceTimeoutMs = flags['acceptance-timeout'] * 1000;
    const started = await host.client.runtimeRollback({ acceptanceTimeoutMs });
    this.note(`  rolling back: runner ${started.runner} on the node (log ${started.log})`);
    const followed = await followTransaction(
      () => host.client.runtimeStatus({ supervisor: host.entry.supervisor }),
      {
        transaction: null,
        before: before.transaction
          ? { id: before.transaction.id, ended: before.transaction.lastStep === 'end' }
          : null,
        timeoutMs: followTimeout(acceptanceTimeoutMs),
        // A runner that died is said within seconds once it was seen working (issue 36).
        runner: {},
      },
    );
    const transaction = followed.status?.transaction?.id ?? null;
    await recordRuntimeVerb('bootstrap rollback', args.host, transaction, followed.verdict);
    if (!followed.verdict.done) {
      throw unfinished(
        args.host,
        transaction,
        followed.status,
        started.log,
        followed.runnerDied,
        followed.answered,
      );
    }
    const { verdict } = followed;
    const txn = followed.status?.transaction;
    // A rollback transaction that was accepted, or an open one rolled back: both are success.
    const succeeded =
      verdict.outcome === 'rolled-back' ||
      (verdict.outcome === 'accepted' && txn?.kind === 'rollback') ||
      (verdict.outcome === 'failed' && txn?.steps.every((s) => s.step !== 'activated'));
    if (!succeeded && verdict.error) throw verdict.error;
    if (!this.jsonEnabled() && followed.status)
      this.log(renderRuntimeStatus(args.host, followed.status, 'controller'));
    return { host: args.host, transaction, outcome: verdict.outcome, status: followed.status };
  }
}
