import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { FleetError } from '@fleet/core';
import { hostNames, runVirtual, runSupervisor } from '@fleet/lab';
import * as path from 'node:path';

/**
 * The lab supervisor process (`fleet lab up` starts one per node, or one for a --virtual lab).
 * Hidden: it is an implementation detail of the lab, started detached with its output in
 * DIR/nodes/<host>/supervisor.log. Its command line names the lab DIR, which is how `lab down`
 * recognises it before signalling.
 */
export default class LabSupervise extends FleetCommand {
  static override hidden = true;
  static override enableJsonFlag = false;
  static override summary =
    "Run a lab node's controller under a supervisor (started by fleet lab up).";
  static override flags = {
    dir: Flags.string({ description: "the lab's real directory", required: true }),
    host: Flags.string({ description: 'the node this supervisor runs', exclusive: ['virtual'] }),
    'node-id': Flags.string({ description: "the controller's --node-id at the first start" }),
    port: Flags.integer({
      description: 'the fixed port (0 at the first start: chosen then, kept after)',
      default: 0,
      min: 0,
      max: 65535,
    }),
    virtual: Flags.boolean({
      description: "every node's controller in this one process",
      default: false,
    }),
    hosts: Flags.integer({ description: 'with --virtual: the number of nodes', min: 1 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(LabSupervise);
    if (flags.virtual) {
      if (flags.hosts === undefined) throw new FleetError('USAGE', '--virtual needs --hosts');
      await runVirtual({
        dir: flags.dir,
        hosts: hostNames(flags.hosts),
        registry: await this.loadRegistry(),
      });
      return;
    }
    if (flags.host === undefined)
      throw new FleetError('USAGE', 'lab supervise needs --host or --virtual');
    await runSupervisor({
      dir: flags.dir,
      host: flags.host,
      flags: { nodeId: flags['node-id'] ?? flags.host, port: flags.port },
      // The same entry point `lab up` started this supervisor with.
      fleetBin: path.join(this.config.root, 'bin', 'run.js'),
    });
  }
}
