/**
 * With `FLEET_RESIDENT=auto` (the operator's opt-in; docs/resident.md, ADR 0017) a call that found
 * no resident listening starts one as it ends, so the operator's next drift, status, apply or
 * config call skips loading fleet. As it ends, not as it starts: the resident's loading then does
 * not take a core from the call the operator waits for. Nothing here may fail the call.
 */
import { listenProblem, ownPlace } from './place.js';
import { spawnResident } from './spawn.js';

/** How long a resident a call started waits for the next call (`resident start` can say more). */
export const AUTO_IDLE_MINUTES = 15;

/**
 * Starts this user's resident when this process exits — unless the call was interrupted (Ctrl-C:
 * exit 130), or where `fleet resident start` would refuse to listen ({@link listenProblem}): the
 * resident would refuse too. `env` is taken now, before the verb runs; `cliRoot` is the CLI's
 * root directory (`cliRootAt` in place.ts).
 */
export function startResidentAtExit(cliRoot: string): void {
  const env = { ...process.env };
  const place = ownPlace(cliRoot);
  process.once('exit', (code) => {
    try {
      if (code === 130) return;
      if (listenProblem(place, env, process.getuid?.() ?? -1) !== undefined) return;
      const child = spawnResident(place, AUTO_IDLE_MINUTES, cliRoot, env);
      if (process.stderr.isTTY === true && child.pid !== undefined)
        process.stderr.write(
          `fleet: starting your resident process (pid ${child.pid}): later drift, status, apply and config calls skip loading fleet; it ends after ${AUTO_IDLE_MINUTES} idle minutes (FLEET_RESIDENT=auto: docs/resident.md)\n`,
        );
    } catch {
      // No resident this time: the next call that finds none tries again.
    }
  });
}
