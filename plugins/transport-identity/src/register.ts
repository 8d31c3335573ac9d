import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';
import { transportIdentityDomain } from './domain.js';

/**
 * The plugin's descriptors. The declaration is plain data; the installer and the prober are loaded
 * only when a command needs them, so `fleet --help` never pays for their code.
 */
export const registration: FleetRegistration = defineRegistration({
  installers: [
    {
      ...transportIdentityDomain,
      load: () => import('./installer.js').then((m) => m.transportIdentityInstaller),
    },
  ],
  probers: [
    {
      id: 'transport-identity.node-id',
      layer: 'runtime',
      domain: 'transport-identity',
      description:
        "expected_node, the running controller's --node-id and the repo's node_id disagree",
      load: () => import('./prober.js').then((m) => m.nodeIdProber),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (contract §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
