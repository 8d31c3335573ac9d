import { defineRegistration, type FleetRegistration, type RegisterHookOptions } from '@fleet/core';
import { transportIdentityDomain } from './domain.js';

export const registration: FleetRegistration = defineRegistration({
  installers: [transportIdentityDomain],
  probers: [
    {
      id: 'transport-identity.node-id',
      layer: 'runtime',
      domain: 'transport-identity',
      description: "expected_node, the running controller's --node-id and the repo's node_id disagree",
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (SPEC §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
