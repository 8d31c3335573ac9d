import * as fs from 'node:fs';
import type { ResidentInfo } from '@fleet/resident/frames.js';
import { FleetCommand } from '../../base-command.js';
import { cliRoot, idleMinutesFlag } from '../../resident.js';
import { pingResident } from '@fleet/resident/client.js';
import { placeToListen } from '@fleet/resident/listen.js';
import { FleetError } from '@fleet/core';
import { residentLog, spawnResident } from '@fleet/resident/spawn.js';

const START_BOUND_MS = 20_000;

export default class ResidentStart extends FleetCommand {
  static override summary =
    'Start your resident operator process: later drift, status, apply and config verbs skip loading fleet.';
  static override description = `Starts one process that keeps fleet's CLI loaded and listens on a Unix socket in a directory only you can enter ($XDG_RUNTIME_DIR/fleet, else <tmpdir>/fleet-<uid>). \`fleet drift\`, \`status\`, \`validate\`, \`apply\` and \`config install|plan|inventory\` run there, each with your environment, working directory, output and exit code, and start in a fraction of the time. Any other verb, a second call while one runs, or FLEET_RESIDENT=off runs as before, in its own process.

fleet never starts one on its own: this command does, or FLEET_RESIDENT=auto in your environment lets one of those verbs that finds none start it as it ends (15 idle minutes). The resident ends after --idle-minutes without a call, when fleet or a plugin changes on disk, when a call leaves work running, on Ctrl-C of the call it runs, and with \`fleet resident stop\`. Starting one that runs already changes nothing. Not on Windows (docs/resident.md).`;
  static override examples = [
    '<%= config.bin %> resident start',
    '<%= config.bin %> resident start --idle-minutes 60',
  ];
  static override flags = {
    'idle-minutes': idleMinutesFlag,
  };

  async run(): Promise<ResidentInfo & { started: boolean }> {
    const { flags } = await this.parse(ResidentStart);
    const root = cliRoot();
    const place = await placeToListen(root);
    const running = await pingResident(root);
    if (running !== undefined) {
      this.log(`Your resident process runs already: pid ${running.pid}, on ${running.socket}.`);
      return { ...running, started: false };
    }
    const logFile = residentLog(place);
    const child = spawnResident(place, flags['idle-minutes'], root);
    let exited: number | null | undefined;
    child.once('exit', (code) => (exited = code));
    const until = Date.now() + START_BOUND_MS;
    for (;;) {
      const info = await pingResident(root);
      if (info !== undefined) {
        this.log(
          `Started your resident process: pid ${info.pid}, on ${info.socket}; it ends after ${info.idleMinutes} idle minutes, or with \`fleet resident stop\`.`,
        );
        return { ...info, started: true };
      }
      if (exited !== undefined || Date.now() > until) {
        const tail = fs.readFileSync(logFile, 'utf8').trim().split('\n').slice(-1)[0] ?? '';
        throw new FleetError(
          'ACTION_FAILED',
          `the resident process ${exited === undefined ? 'did not listen within 20 s' : `exited (${exited})`}: ${tail} (log: ${logFile})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
