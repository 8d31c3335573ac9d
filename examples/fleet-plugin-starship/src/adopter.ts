/**
 * The starship adopter: core's `fileAdopter` — `fleet config adopt HOST ~/.config/starship.toml`
 * takes the live file into `mirror/<host>/starship/`, host variables reverse-substituted and
 * secrets scanned for by the core first.
 */
import { fileAdopter, type Adopter } from '@fleet/core/plugin';
import { DOMAIN } from './domain.js';

/** Makes the domain's adopter (loaded lazily through `register.ts`). */
export function createStarshipAdopter(): Adopter {
  return fileAdopter({ domain: DOMAIN });
}
