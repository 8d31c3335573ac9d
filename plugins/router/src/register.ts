import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';
import { routerDomain } from './domain.js';

/**
 * The plugin's descriptors. The declaration is plain data; the installer, adopter and prober are
 * loaded only when a command needs them, so `fleet --help` never pays for their code.
 */
export const registration: FleetRegistration = defineRegistration({
  installers: [
    { ...routerDomain, load: () => import('./installer.js').then((m) => m.routerInstaller) },
  ],
  adopters: [
    {
      domain: routerDomain.domain,
      load: () => import('./adopter.js').then((m) => m.routerAdopter),
    },
  ],
  probers: [
    {
      id: 'router.volume',
      layer: 'derived',
      domain: 'router',
      description: 'the installed volume differs from the router config file',
      load: () => import('./prober.js').then((m) => m.routerVolumeProber),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (contract §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
