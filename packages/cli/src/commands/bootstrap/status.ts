import { Args, Flags } from '@fleet/core/command';
import type { RuntimeStatusResponse } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import { loadHostRuntime } from '@fleet/operator/runtime/host.js';
import { observeRuntime } from '@fleet/operator/runtime/bootstrap-plan.js';
import { renderRuntimeStatus } from '@fleet/operator/runtime/render.js';

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
    const host = await loadHostRuntime(root, args.host, { timeoutMs: flags.timeout });
    const observation = await observeRuntime(host);
    if (observation.through === 'none')
      throw new core.FleetError('HOST_UNREACHABLE', observation.reason);
    const { status } = observation;
    if (!this.jsonEnabled()) this.log(renderRuntimeStatus(args.host, status, observation.through));
    if (status.state === 'manual-recovery-required' || status.state === 'inconsistent') {
      process.exitCode = core.ExitCode.verification;
    }
    return { host: args.host, through: observation.through, status };
  }
}
