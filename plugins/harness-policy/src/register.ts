import { defineRegistration, type FleetRegistration, type RegisterHookOptions } from '@fleet/core';
import { harnessPolicyDomain } from './domain.js';

export const registration: FleetRegistration = defineRegistration({
  installers: [harnessPolicyDomain],
});

/** The `fleet:register` hook: returns this plugin's descriptors (SPEC §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
