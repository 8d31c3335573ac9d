import type { ResidentInfo } from '@fleet/resident/frames.js';
import { FleetCommand } from '../../base-command.js';
import { cliRoot } from '../../resident.js';
import { pingResident, quitResident } from '@fleet/resident/client.js';

export default class ResidentStop extends FleetCommand {
  static override summary = 'Stop your resident operator process (after the call it runs, if any).';
  static override description =
    'Asks your resident operator process to end; a call it runs finishes first. Later verbs run in their own process again. Running it when no resident runs changes nothing.';
  static override examples = ['<%= config.bin %> resident stop'];

  async run(): Promise<{ running: boolean; stopped?: ResidentInfo }> {
    await this.parse(ResidentStop);
    const root = cliRoot();
    const stopped = await quitResident(root);
    if (stopped === undefined) {
      this.log('No resident process of yours runs.');
      return { running: false };
    }
    // Ends once its call is done; wait (bounded) so the next verb does not find it still there.
    const until = Date.now() + 10_000;
    while ((await pingResident(root)) !== undefined && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    this.log(`Stopped your resident process (pid ${stopped.pid}, ${stopped.calls} calls).`);
    return { running: false, stopped };
  }
}
