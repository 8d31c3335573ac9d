import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import type { LabDownResult } from '@fleet/lab';
import { labDown } from '@fleet/lab';
import { FleetError } from '@fleet/core';

export default class LabDown extends FleetCommand {
  static override summary = 'Stop the processes a lab started.';
  static override description =
    "Stops exactly the lab's supervisors and controllers (the pids recorded in DIR), each only while its command line still shows it is this lab's: SIGTERM, then SIGKILL after a bound. A lab of real units (--supervisor systemd-user) has each node's unit stopped, disabled and removed from the user manager. The lab's files stay; `fleet lab up --dir DIR` brings it back. Running it again is a no-op.";
  static override examples = [
    '<%= config.bin %> lab down',
    '<%= config.bin %> lab down --dir /tmp/lab --json',
  ];
  static override flags = {
    dir: Flags.directory({ description: 'the lab directory', default: '.fleet-lab' }),
  };

  async run(): Promise<LabDownResult> {
    const { flags } = await this.parse(LabDown);
    const registry = await this.loadRegistry();
    const result = await labDown({
      dir: flags.dir,
      systemdAdapter: () => registry.bootstrapAdapter('systemd-user'),
    });
    const stopped = result.processes.filter(
      (p) => p.outcome === 'terminated' || p.outcome === 'killed',
    );
    const foreign = result.processes.filter((p) => p.outcome === 'not-ours');
    const survived = result.processes.filter((p) => p.outcome === 'survived');
    for (const unit of result.units)
      this.log(`Stopped and removed ${unit.unit} (${unit.host}) from the user manager.`);
    if (stopped.length === 0 && survived.length === 0) {
      if (result.units.length === 0) this.log(`No lab process runs in ${result.dir}.`);
    } else
      this.log(
        `Stopped ${stopped.length} lab process${stopped.length === 1 ? '' : 'es'} in ${result.dir}.`,
      );
    for (const p of foreign)
      this.note(`left pid ${p.pid} alone: it is no longer this lab's ${p.role} (pid reused)`);
    if (survived.length > 0) {
      throw new FleetError(
        'ACTION_FAILED',
        `pid${survived.length === 1 ? '' : 's'} ${survived.map((p) => p.pid).join(', ')} survived SIGKILL`,
      );
    }
    return result;
  }
}
