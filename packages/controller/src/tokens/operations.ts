/**
 * Single-use operation ids for token administration (contract §15): a token operation leaves no
 * operation record (its answer holds a token, which is never stored), so its id is claimed by a
 * marker file created exclusively and durably, `~/.local/state/fleet/token-operations/<ULID>`,
 * before the store is touched. A replay — also after a restart — finds the marker and is refused
 * (`REPLAY_REJECTED`); an id outside the clock-skew window is refused as `CLOCK_SKEW` first, so a
 * marker older than twice that window can never be needed again and is pruned at the next claim.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FleetError } from '@fleet/core/node';
import { createExclusive, ensurePrivateDir, removeDurable } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { checkFresh } from '../handlers/replay.js';
import { ulidTime } from '../operations.js';
import type { ControllerRuntime } from '../runtime.js';

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function tokenOperationsDir(runtime: Pick<ControllerRuntime, 'state'>): string {
  return join(runtime.state.root, 'token-operations');
}

/** Claims `id` for one token operation; `CLOCK_SKEW` or `REPLAY_REJECTED` otherwise. */
export async function claimTokenOperation(runtime: ControllerRuntime, id: string): Promise<void> {
  checkFresh(runtime, id);
  const dir = tokenOperationsDir(runtime);
  await ensurePrivateDir(runtime.home, dir);
  await prune(runtime, dir);
  try {
    await createExclusive(join(dir, id), '');
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') {
      throw new FleetError('REPLAY_REJECTED', `operation id ${id} was already used`);
    }
    throw error;
  }
}

async function prune(runtime: ControllerRuntime, dir: string): Promise<void> {
  const horizon = runtime.clock.now().getTime() - 2 * runtime.limits.clockSkewMs;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (ULID.test(name) && ulidTime(name) < horizon) await removeDurable(join(dir, name));
  }
}
