import {
  defineRegistration,
  type FleetRegistration,
  type RegisterHookOptions,
} from '@fleet/core/plugin';

/**
 * The Windows Task Scheduler supervisor (contract §12): a scheduled task defined by Task Scheduler
 * XML, driven with `schtasks /Create /XML`, `/Run`, `/End`, `/Query`, and a prober of its state.
 * Implementations load lazily: `--help` and `--version` never import them.
 */
export const registration: FleetRegistration = defineRegistration({
  bootstrapAdapters: [
    {
      supervisor: 'windows-task',
      platforms: ['win32'],
      description: 'a Windows scheduled task defined by Task Scheduler XML (schtasks)',
      load: () => import('./adapter.js').then((m) => m.createWindowsTaskAdapter()),
    },
  ],
  probers: [
    {
      id: 'windows-task.task',
      layer: 'runtime',
      description:
        'the controller task is present, enabled, running the current generation with the expected --node-id',
      load: () => import('./prober.js').then((m) => m.prober),
    },
  ],
});

/** The `fleet:register` hook: returns this plugin's descriptors (contract §2). */
export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
