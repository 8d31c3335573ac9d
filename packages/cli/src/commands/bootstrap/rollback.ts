import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { acceptanceTimeoutFlag } from '../../runtime-flags.js';
import * as core from '@fleet/core';
import { BootstrapService, renderRuntimeStatus } from '@fleet/operator/bootstrap';

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
    const service = await this.service(BootstrapService);
    const rolledBack = await service.rollback({
      root,
      host: args.host,
      confirm: flags.confirm,
      acceptanceTimeoutMs: flags['acceptance-timeout'] * 1000,
      timeoutMs: flags.timeout,
      onProgress: (line) => this.note(`  ${line}`),
    });
    if (!rolledBack.confirmed) {
      const before = rolledBack.status;
      if (!this.jsonEnabled()) this.log(renderRuntimeStatus(args.host, before, 'controller'));
      this.note(`not rolled back: run again with --confirm to roll ${args.host} back`);
      process.exitCode = core.ExitCode.usage;
      return { host: args.host, status: before, confirmed: false };
    }
    const { transaction, outcome, status } = rolledBack;
    if (!this.jsonEnabled() && status)
      this.log(renderRuntimeStatus(args.host, status, 'controller'));
    return { host: args.host, transaction, outcome, status };
  }
}
