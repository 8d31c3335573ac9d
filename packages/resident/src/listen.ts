/**
 * What `fleet resident start` and `fleet resident serve` share (docs/resident.md): the place a
 * resident may listen on — refused on Windows, in another user's runtime directory, and in a
 * directory that is not the user's alone.
 */
import { FleetError } from '@fleet/core';
import { listenProblem, ownPlace, type ResidentPlace } from './place.js';

/**
 * This user's resident place for the CLI at `cliRoot`, its directory made (0700) when missing;
 * `RESIDENT_REFUSED` else.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- kept async: its callers take a refusal as a rejection
export async function placeToListen(cliRoot: string): Promise<ResidentPlace> {
  if (process.platform === 'win32')
    throw new FleetError(
      'RESIDENT_REFUSED',
      'the resident process needs Unix sockets: not on Windows',
    );
  const place = ownPlace(cliRoot);
  const problem = listenProblem(place, process.env, process.getuid?.() ?? -1);
  if (problem !== undefined) throw new FleetError('RESIDENT_REFUSED', problem);
  return place;
}
