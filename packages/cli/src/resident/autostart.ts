/**
 * A call that found no resident listening starts one as it ends (`FLEET_RESIDENT` unset or
 * `auto`; docs/resident.md, ADR 0017), so the operator's next drift, status, apply or config call
 * skips loading fleet. As it ends, not as it starts: the resident's loading then does not take a
 * core from the call the operator waits for. Nothing here may fail the call.
 */
import { ensurePrivateDir, ownPlace } from './place.js';
import { spawnResident } from './spawn.js';

/** How long a resident a call started waits for the next call (`resident start` can say more). */
export const AUTO_IDLE_MINUTES = 15;

/**
 * Starts this user's resident when this process exits — unless its directory is not the user's
 * alone, which the resident would refuse too. `env` is taken now, before the verb runs.
 */
export function startResidentAtExit(): void {
  const env = { ...process.env };
  process.once('exit', () => {
    try {
      const place = ownPlace();
      if (ensurePrivateDir(place.dir, process.getuid?.() ?? -1) !== undefined) return;
      const child = spawnResident(place, AUTO_IDLE_MINUTES, env);
      if (process.stderr.isTTY === true && child.pid !== undefined)
        process.stderr.write(
          `fleet: starting your resident process (pid ${child.pid}): later drift, status, apply and config calls skip loading fleet; it ends after ${AUTO_IDLE_MINUTES} idle minutes (FLEET_RESIDENT=manual or off: docs/resident.md)\n`,
        );
    } catch {
      // No resident this time: the next call that finds none tries again.
    }
  });
}
