import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/node';

/**
 * The CLI's own `fleet:register` hook: the lab supervisor of `fleet lab up` (contract §13) as a
 * bootstrap adapter (contract §12), so a lab node can run runtime generations. The adapter lives with
 * the lab in this package; it loads lazily, so `--help` and `--version` never import it.
 */
export const registration: FleetRegistration = defineRegistration({
  bootstrapAdapters: [
    {
      supervisor: 'lab',
      platforms: ['linux', 'darwin'],
      description:
        "the lab supervisor of fleet lab up: ~/.config/fleet/lab-controller.json, restarted through the supervisor's control socket",
      load: () => import('@fleet/lab').then((m) => m.createLabAdapter()),
    },
  ],
});

/** The `fleet:register` hook: returns the CLI's own descriptors. */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
