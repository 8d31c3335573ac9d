import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';

/**
 * The launchd supervisor (contract §12): the controller as a LaunchAgent in
 * `~/Library/LaunchAgents/`, driven with `launchctl bootstrap|bootout|kickstart|print`, and a
 * prober of fleet's agents. Implementations load lazily: `--help` and `--version` never import them.
 */
export const registration: FleetRegistration = defineRegistration({
  bootstrapAdapters: [
    {
      supervisor: 'launchd',
      platforms: ['darwin'],
      description: 'a LaunchAgent in ~/Library/LaunchAgents/ (launchctl, gui/<uid>)',
      load: () => import('./adapter.js').then((m) => m.createLaunchdAdapter()),
    },
  ],
  probers: [
    {
      id: 'launchd.agents',
      layer: 'runtime',
      description:
        "fleet's LaunchAgents: the controller's is loaded, running the current generation with the expected --node-id, its plist as fleet generated it; every scheduled report's is loaded and its last run exited 0 or 1",
      load: () => import('./prober.js').then((m) => m.prober),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (contract §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
