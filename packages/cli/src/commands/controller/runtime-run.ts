import { Flags } from '@oclif/core';
import { FleetCommand } from '../../base-command.js';

/**
 * The node-local runtime runner (contract §12), started detached by the controller for
 * `runtime-activate` and `runtime-rollback` (and by the SSH recovery receiver): it carries the
 * transaction past the controller's restart, journaling every step. Not for operators.
 */
export default class ControllerRuntimeRun extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary =
    'Carry a runtime transaction through restart and acceptance (node-local).';
  static override flags = {
    home: Flags.directory({ required: true, exists: true, description: "the node's home" }),
    mode: Flags.string({ required: true, options: ['activate', 'rollback'] }),
    transaction: Flags.string({
      required: true,
      description: 'transaction id (activate) or a label',
    }),
    'acceptance-timeout-ms': Flags.integer({ min: 1000, max: 600_000 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ControllerRuntimeRun);
    const { runRuntimeTransaction, waitForGo } = await import('@fleet/controller');
    const { realpath } = await import('node:fs/promises');
    await waitForGo(process.stdin);
    const registry = await this.loadRegistry();
    const log = (line: string) => process.stdout.write(`[${new Date().toISOString()}] ${line}\n`);
    log(`runner ${process.pid}: ${flags.mode} ${flags.transaction}`);
    try {
      const outcome = await runRuntimeTransaction({
        home: await realpath(flags.home),
        registry,
        mode: flags.mode as 'activate' | 'rollback',
        transaction: flags.transaction,
        ...(flags['acceptance-timeout-ms'] === undefined
          ? {}
          : { acceptanceTimeoutMs: flags['acceptance-timeout-ms'] }),
        log,
      });
      log(`transaction ${outcome.transaction} ended: ${outcome.outcome}`);
    } catch (error) {
      log(`runner failed: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  }
}
