/**
 * The plugin's `fleet:register` hook (package.json `oclif.hooks["fleet:register"]`). It returns
 * plain descriptors built with `defineRegistration`, which stamps the plugin API version this
 * plugin was compiled against. The declaration is data; the implementations are loaded lazily by
 * the `load` factories, only when a command (or the controller) needs them.
 */
import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';
import { IDENTITY_PROBER, gitconfigDomain } from './domain.js';

/** This plugin's descriptors. */
export const registration: FleetRegistration = defineRegistration({
  installers: [
    {
      ...gitconfigDomain,
      load: () => import('./installer.js').then((m) => m.createGitconfigInstaller()),
    },
  ],
  adopters: [
    {
      domain: gitconfigDomain.domain,
      load: () => import('./adopter.js').then((m) => m.createGitconfigAdopter()),
    },
  ],
  probers: [
    {
      id: IDENTITY_PROBER,
      layer: 'derived',
      domain: gitconfigDomain.domain,
      description:
        "git's effective user.email / user.name differ from the host's git_email / git_name",
      load: () => import('./prober.js').then((m) => m.createIdentityProber()),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors. */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
