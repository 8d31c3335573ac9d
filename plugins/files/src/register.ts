import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';
import { filesDomain } from './domain.js';

/** The plugin's descriptors: plain data, with the installer and adopter loaded only when needed. */
export const registration: FleetRegistration = defineRegistration({
  installers: [
    { ...filesDomain, load: () => import('./installer.js').then((m) => m.filesInstaller) },
  ],
  adopters: [
    { domain: filesDomain.domain, load: () => import('./adopter.js').then((m) => m.filesAdopter) },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (contract §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
