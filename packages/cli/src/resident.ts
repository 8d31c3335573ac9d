/**
 * What the `fleet resident` commands hand to `@fleet/resident` (docs/resident.md): this CLI's root
 * directory, named as `bin/run.js` names it (the socket's name is made from it), and the idle flag
 * `resident start` and `resident serve` share.
 */
import { Flags } from '@fleet/core/command';
import { cliRootAt } from '@fleet/resident/place.js';

/** This CLI's root directory, its real path (this file is its dist/src/resident.js). */
export function cliRoot(): string {
  return cliRootAt(new URL('../../', import.meta.url));
}

export const idleMinutesFlag = Flags.integer({
  description: 'end after this many minutes without a call',
  min: 1,
  max: 1440,
  default: 15,
});
