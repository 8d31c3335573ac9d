/**
 * `fleet plugins new`'s service: writes a new domain plugin package that builds, tests and links
 * (core's plugin scaffold; docs/plugin-authoring.md), and with `wire` declares its domain in the
 * fleet repository and commits (plugins/new.ts). Needs no plugin: nothing is injected.
 */
import { injectable } from '@fleet/core/di';
import { newPlugin, type NewPluginOptions, type NewPluginResult } from '../plugins/new.js';

export { nextSteps } from '../plugins/new.js';
export type { NewPluginOptions, NewPluginResult, WiredDomain } from '../plugins/new.js';

@injectable()
export class PluginScaffoldService {
  /** Writes the package into `dir` (which must not exist or be empty), and wires it if asked. */
  run(options: NewPluginOptions): Promise<NewPluginResult> {
    return newPlugin(options);
  }
}
