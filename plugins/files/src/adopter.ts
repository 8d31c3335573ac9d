/**
 * The files adopter (contract §6, §8.5): core's {@link fileAdopter} — a `whole` entry's candidate
 * is the whole capture; a `block` entry's is its block's body only (the lines outside the markers
 * belong to the host's users, never to the fleet). Candidates go to
 * `mirror/<host>/files/<path without ~/>`; `adopt --promote` writes the candidate over the entry's
 * source (for a block entry the source is the body itself).
 */
import { fileAdopter, type Adopter } from '@fleet/core/plugin';
import { filesDomain } from './domain.js';

/** The domain's adopter, loaded lazily by the registry (`register.ts`). */
export const filesAdopter: Adopter = fileAdopter({
  domain: filesDomain.domain,
  mirrorName: (file) => file.path.replace(/^~\//, ''),
});
