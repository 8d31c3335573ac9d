import { defineRegistration, type FleetRegistration, type RegisterHookOptions } from '@fleet/core';
import { routerDomain } from './domain.js';

export const registration: FleetRegistration = defineRegistration({
  installers: [routerDomain],
  probers: [
    {
      id: 'router.volume',
      layer: 'derived',
      domain: 'router',
      description: 'the installed volume differs from the router config file',
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (SPEC §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
