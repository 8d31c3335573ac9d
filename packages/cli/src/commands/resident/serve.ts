import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FleetCommand } from '../../base-command.js';
import { cliRoot as ownRoot, idleMinutesFlag } from '../../resident.js';
import { placeToListen } from '@fleet/resident/listen.js';
import { fingerprint, watchedFiles } from '@fleet/resident/fingerprint.js';
import { serveResident } from '@fleet/resident/server.js';
import { pingResident } from '@fleet/resident/client.js';
import { execute, reportedFailure } from '@fleet/core/command';
import { takeObservedHeads } from '@fleet/core';

export default class ResidentServe extends FleetCommand {
  static override hidden = true;
  static override summary =
    'Run the resident operator process in the foreground (`fleet resident start` starts it).';
  static override description =
    "Listens on this user's resident socket and runs the calls `fleet` sends it, one at a time, until it is stopped, its code changes on disk, a call leaves work running, or it has had no call for --idle-minutes (docs/resident.md).";
  static override flags = {
    'idle-minutes': idleMinutesFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ResidentServe);
    const cliRoot = ownRoot();
    const place = await placeToListen(cliRoot);
    const binPath = join(cliRoot, 'bin', 'run.js');
    const files = watchedFiles({
      cliRoot,
      plugins: this.config.getPluginsList(),
      dataDir: this.config.dataDir,
      coreBundleFile: fileURLToPath(import.meta.resolve('@fleet/core/command')),
    });
    const loaded = fingerprint(files);
    // The resident's own lines go to its log (its stderr), never into a call's output.
    const ownStderr = process.stderr.write.bind(process.stderr);
    const log = (line: string): void => {
      ownStderr(`[${new Date().toISOString()}] ${line}\n`);
    };
    // Two calls that found none may each have started one: the later to get here leaves it to
    // the one that listens. A socket nobody answers on is a resident's that was killed: ours, in
    // our directory, to replace.
    const running = await pingResident(cliRoot);
    if (running !== undefined) {
      log(`resident ${process.pid} ends: resident ${running.pid} listens already`);
      return;
    }
    rmSync(place.socket, { force: true });
    await serveResident({
      place,
      idleMinutes: flags['idle-minutes'],
      binPath,
      execute: (argv) => execute({ args: [...argv], dir: pathToFileURL(binPath).href }),
      current: () => fingerprint(files) === loaded,
      freshState: () => {
        // What a process of its own starts without: the last failure, and audit heads observed.
        reportedFailure.last = null;
        takeObservedHeads();
        return Promise.resolve();
      },
      log,
    });
    // Runs until the resident ends the process (serveResident's shutdown).
    await new Promise<never>(() => undefined);
  }
}
