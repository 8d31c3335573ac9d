import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { runControllerRuntimeRun } from '@fleet/controller/runtime-run';

/**
 * The node-local runtime runner (contract §12), started by the controller for `runtime-activate`
 * and `runtime-rollback` (and by the SSH recovery receiver) where a restart of the controller
 * cannot end it — a transient unit of the user manager, a task of its own, or a detached child
 * (docs/runtime-lifecycle.md): it carries the transaction past the controller's restart,
 * journaling every step. Not for operators.
 */
export default class ControllerRuntimeRun extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary =
    'Carry a runtime transaction through restart and acceptance (node-local).';
  static override flags = {
    home: Flags.directory({ required: true, exists: true, description: "the node's home" }),
    'log-file': Flags.string({
      description: 'append progress lines here (a supervisor that cannot redirect output: a task)',
    }),
    mode: Flags.string({ required: true, options: ['activate', 'rollback', 'resume'] }),
    transaction: Flags.string({
      required: true,
      description: 'transaction id (activate, resume) or a label',
    }),
    'acceptance-timeout-ms': Flags.integer({ min: 1000, max: 600_000 }),
    'go-file': Flags.string({
      description: 'begin once this file exists (the controller writes it after its answer)',
    }),
    'wait-pid': Flags.integer({
      min: 1,
      description: 'or once this process (the one that started the runner) has ended',
    }),
    'pid-file': Flags.string({ description: 'write this process id here first' }),
  };

  // Reached only when bin/run.js did not hand the call to @fleet/controller's own entry first (a
  // test, the command loaded by oclif directly): the same entry then runs it, with the same
  // registry — the node's own, never plugins from oclif's data directory.
  async run(): Promise<void> {
    await this.parse(ControllerRuntimeRun);
    await runControllerRuntimeRun(this.argv, { cliRoot: this.config.root });
  }
}
