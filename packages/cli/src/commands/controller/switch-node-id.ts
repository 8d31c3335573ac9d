import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { runNodeIdSwitch } from '@fleet/controller';
import { realpath } from 'node:fs/promises';
import { appendFileSync } from 'node:fs';

/**
 * The `--node-id` switch of transport-identity's coupled install (contract §10.2), in a process of
 * its own: started by the controller once it has answered the install, out of reach of the restart
 * it asks for (a transient unit of the user manager, a task of its own, a detached child). It
 * drives the supervisor the node recorded; the controller that comes up settles the operation.
 * Its output goes to ~/.local/state/fleet/logs/transport-identity.log. Not for operators.
 */
export default class ControllerSwitchNodeId extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary =
    "Switch the controller's --node-id through its supervisor (node-local).";
  static override flags = {
    home: Flags.directory({ required: true, exists: true, description: "the node's home" }),
    'log-file': Flags.string({
      description: 'append progress lines here (a supervisor that cannot redirect output: a task)',
    }),
    from: Flags.string({ required: true, description: 'the --node-id the controller runs with' }),
    to: Flags.string({ required: true, description: 'the --node-id to switch to' }),
    operation: Flags.string({ required: true, description: 'the install operation it belongs to' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ControllerSwitchNodeId);
    const logFile = flags['log-file'];
    const log = (line: string) => {
      const text = `[${new Date().toISOString()}] switch ${process.pid}: ${line}\n`;
      if (logFile) appendFileSync(logFile, text, { mode: 0o600 });
      else process.stdout.write(text);
    };
    try {
      const outcome = await runNodeIdSwitch({
        home: await realpath(flags.home),
        registry: await this.loadRegistry(),
        from: flags.from,
        to: flags.to,
        operationId: flags.operation,
        log,
      });
      process.exitCode = outcome.switched ? 0 : outcome.rolledBack ? 6 : 1;
    } catch (error) {
      log(`failed: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  }
}
