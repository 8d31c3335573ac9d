import { Args, Flags } from '@fleet/core/command';
import type { RuntimeStatusResponse } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import { BootstrapService, renderRuntimeStatus } from '@fleet/operator/bootstrap';

export default class BootstrapStatus extends FleetCommand {
  static override summary =
    "Show a host's runtime state: the journal reconciled with what runs (read-only).";
  static override description = `Reports idle, in-progress, accepted, rolled-back, manual-recovery-required or inconsistent — from the node's journal checked against observation (the current pointer, the supervisor, the live identity), never journal intent as liveness — with the last transaction's steps, the generations kept, and what recovery should do next. Through the controller; when it does not answer and the host has SSH recovery configured, through the recovery receiver.

Exit 0, or 6 when the state is manual-recovery-required or inconsistent.`;
  static override examples = [
    '<%= config.bin %> bootstrap status node-01',
    '<%= config.bin %> bootstrap status node-01 --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = { host: Args.string({ description: 'the host', required: true }) };
  static override flags = {
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 30_000,
      min: 1,
    }),
  };

  async run(): Promise<{ host: string; through: string; status: RuntimeStatusResponse }> {
    const { args, flags } = await this.parse(BootstrapStatus);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(BootstrapService);
    const { through, status } = await service.status({
      root,
      host: args.host,
      timeoutMs: flags.timeout,
    });
    if (!this.jsonEnabled()) this.log(renderRuntimeStatus(args.host, status, through));
    if (status.state === 'manual-recovery-required' || status.state === 'inconsistent') {
      process.exitCode = core.ExitCode.verification;
    }
    return { host: args.host, through, status };
  }
}
