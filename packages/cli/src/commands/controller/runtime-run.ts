import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';

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

  async run(): Promise<void> {
    const { flags } = await this.parse(ControllerRuntimeRun);
    const { runRuntimeTransaction, waitForGo } = await import('@fleet/controller');
    const { realpath, writeFile } = await import('node:fs/promises');
    const { appendFileSync } = await import('node:fs');
    const logFile = flags['log-file'];
    const log = (line: string) => {
      const text = `[${new Date().toISOString()}] ${line}\n`;
      if (logFile) appendFileSync(logFile, text, { mode: 0o600 });
      else process.stdout.write(text);
    };
    if (flags['pid-file']) await writeFile(flags['pid-file'], `${process.pid}\n`, { mode: 0o600 });
    const go = await waitForGo({
      ...(flags['go-file'] ? { goFile: flags['go-file'] } : {}),
      ...(flags['wait-pid'] ? { waitPid: flags['wait-pid'] } : {}),
      timeoutMs: flags['go-file'] || flags['wait-pid'] ? 30_000 : 0,
    });
    const registry = await this.loadRegistry();
    log(`runner ${process.pid}: ${flags.mode} ${flags.transaction} (${go})`);
    try {
      const outcome = await runRuntimeTransaction({
        home: await realpath(flags.home),
        registry,
        mode: flags.mode as 'activate' | 'rollback' | 'resume',
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
