import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';

/**
 * The systemd user-unit supervisor (contract §12): a unit in `~/.config/systemd/user/`, driven with
 * `systemctl --user daemon-reload|restart|show`, and a prober of the unit's runtime state.
 * Implementations load lazily: `--help` and `--version` never import them.
 */
export const registration: FleetRegistration = defineRegistration({
  bootstrapAdapters: [
    {
      supervisor: 'systemd-user',
      platforms: ['linux'],
      description: 'a systemd user unit in ~/.config/systemd/user/ (systemctl --user)',
      load: () => import('./adapter.js').then((m) => m.createSystemdUserAdapter()),
    },
  ],
  probers: [
    {
      id: 'systemd-user.unit',
      layer: 'runtime',
      description:
        'the controller unit is present, enabled, running the current generation with the expected --node-id',
      load: () => import('./prober.js').then((m) => m.prober),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (contract §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
