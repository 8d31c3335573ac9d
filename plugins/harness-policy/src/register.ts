import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';
import { harnessPolicyDomain } from './domain.js';

/**
 * The plugin's descriptors. The declaration is plain data; the installer and adopter are loaded
 * only when a command needs them, so `fleet --help` never pays for their code.
 */
export const registration: FleetRegistration = defineRegistration({
  installers: [
    {
      ...harnessPolicyDomain,
      load: () => import('./installer.js').then((m) => m.harnessPolicyInstaller),
    },
  ],
  adopters: [
    {
      domain: harnessPolicyDomain.domain,
      load: () => import('./adopter.js').then((m) => m.harnessPolicyAdopter),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (contract §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
