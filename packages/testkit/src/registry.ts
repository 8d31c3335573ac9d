import {
  FLEET_PLUGIN_API_VERSION,
  Registry,
  assembleRegistrations,
  type HookOutcome,
  type PluginRef,
  type RegisterHookOptions,
} from '@fleet/core';

/** A plugin's `fleet:register` hook function, as its hook module exports it. */
export type RegisterHookFunction = (options: RegisterHookOptions) => unknown;

/** A plugin and its hook, as {@link registryFromHooks} runs them. */
export interface PluginUnderTest {
  /** How the host would name the plugin (`type: 'core'` for bundled, `'link'`/`'user'` otherwise). */
  readonly plugin: PluginRef;
  /** The plugin's default-exported `fleet:register` function. */
  readonly hook: RegisterHookFunction;
}

/**
 * Runs plugins' `fleet:register` hooks the way the CLI and the controller do — each in isolation,
 * a throw captured and attributed to its plugin — and assembles the registry with the core's own
 * rules. Assert on `registry.problems`: a refused plugin does not throw here, exactly as it does
 * not take the CLI down.
 */
export async function registryFromHooks(
  plugins: readonly PluginUnderTest[],
  apiVersion: number = FLEET_PLUGIN_API_VERSION,
): Promise<Registry> {
  const outcomes: HookOutcome[] = await Promise.all(
    plugins.map(async ({ plugin, hook }): Promise<HookOutcome> => {
      try {
        return { plugin, ok: true, result: await hook({ apiVersion }) };
      } catch (error) {
        return { plugin, ok: false, error };
      }
    }),
  );
  const { accepted, problems } = assembleRegistrations(outcomes, apiVersion);
  return new Registry(accepted, problems);
}
