import type { ResidentInfo } from '@fleet/resident/frames.js';
import { FleetCommand } from '../../base-command.js';
import { cliRoot } from '../../resident.js';
import { pingResident } from '@fleet/resident/client.js';

export default class ResidentStatus extends FleetCommand {
  static override summary = 'Show whether your resident operator process runs, and since when.';
  static override examples = [
    '<%= config.bin %> resident status',
    '<%= config.bin %> resident status --json',
  ];

  async run(): Promise<{ running: false } | ({ running: true } & ResidentInfo)> {
    await this.parse(ResidentStatus);
    const info = await pingResident(cliRoot());
    if (info === undefined) {
      this.log('No resident process of yours runs: every verb runs in its own process.');
      return { running: false };
    }
    this.log(
      `Your resident process runs: pid ${info.pid} since ${info.startedAt}, ${info.calls} call${info.calls === 1 ? '' : 's'}${info.busy ? ', one running now' : ''}, on ${info.socket}; it ends after ${info.idleMinutes} idle minutes.`,
    );
    return { running: true, ...info };
  }
}
