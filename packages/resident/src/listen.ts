/**
 * What `fleet resident start` and `fleet resident serve` share (docs/resident.md): the place a
 * resident may listen on — refused on Windows, in another user's runtime directory, and in a
 * directory that is not the user's alone.
 */
import type { ResidentPlace } from './place.js';

/**
 * This user's resident place for the CLI at `cliRoot`, its directory made (0700) when missing;
 * `RESIDENT_REFUSED` else.
 */
export async function placeToListen(cliRoot: string): Promise<ResidentPlace> {
  const { FleetError } = await import('@fleet/core');
  const { listenProblem, ownPlace } = await import('./place.js');
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
