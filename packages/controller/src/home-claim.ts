/**
 * One controller per home (`createController`, controller.ts): the pid file
 * `~/.local/state/fleet/controller.pid`, created exclusively and taken over only when the process
 * it names is gone, and the homes this process already serves, which a pid file cannot tell
 * apart. `claimHome` returns the release the controller calls when it closes or its start fails.
 * Apart from the start's other steps because it alone keeps state beyond one start.
 */
import { readFile, unlink } from 'node:fs/promises';
import { FleetError } from '@fleet/core/node';
import { createExclusive } from './fs/durable.js';
import { errnoOf } from './fs/errors.js';
import { processAlive } from './process-alive.js';
import type { StatePaths } from './state-paths.js';

/** Homes served by a controller of this process (the pid file cannot tell them apart). */
const servedHere = new Set<string>();

/** One controller per home: a pid file, taken over when its process is gone. */
export async function claimHome(state: StatePaths): Promise<() => Promise<void>> {
  if (servedHere.has(state.root)) {
    throw new FleetError('LOCKED', `another controller in this process serves ${state.home}`);
  }
  servedHere.add(state.root);
  const release = async () => {
    await unlink(state.pidFile).catch(() => undefined);
    servedHere.delete(state.root);
  };
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await createExclusive(state.pidFile, `${process.pid}\n`);
        return release;
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
      }
      const pid = Number((await readFile(state.pidFile, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new FleetError('LOCKED', `another controller (pid ${pid}) serves this home`);
      }
      await unlink(state.pidFile).catch(() => undefined);
    }
    throw new FleetError('LOCKED', 'could not claim the controller pid file');
  } catch (error) {
    servedHere.delete(state.root);
    throw error;
  }
}
