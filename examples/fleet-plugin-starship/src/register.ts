/**
 * The plugin's `fleet:register` hook: plain descriptors built with `defineRegistration`; the
 * implementations (and so the TOML library) load lazily, only when a command or a node's
 * controller needs them.
 */
import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';
import { starshipDomain } from './domain.js';

/** This plugin's descriptors. */
export const registration: FleetRegistration = defineRegistration({
  installers: [
    {
      ...starshipDomain,
      load: () => import('./installer.js').then((m) => m.createStarshipInstaller()),
    },
  ],
  adopters: [
    {
      domain: starshipDomain.domain,
      load: () => import('./adopter.js').then((m) => m.createStarshipAdopter()),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors. */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
