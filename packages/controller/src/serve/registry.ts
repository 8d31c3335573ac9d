/**
 * The registry a node's own processes use — the controller (`controller serve`) and its runtime
 * runner (`controller runtime-run`): the CLI's bundled plugins, the plugins its runtime generation
 * carries (verified against its build record, carried-plugins.ts) and, on a lab node, the dev
 * plugins its policy names (dev-plugins.ts). Nothing outside the CLI's own directory adds one
 * (contract §10.5: the node decides which code it runs), unlike the operator's oclif plugins.
 */
import { Registry, assembleRegistrations, FLEET_PLUGIN_API_VERSION } from '@fleet/core/node';
import { labDevPlugins } from './dev-plugins.js';
import { discoverPlugins, runRegisterHooks } from './plugins.js';

export interface ServeMainOptions {
  /** The CLI package's directory: its package.json names the bundled plugins. */
  readonly cliRoot: string;
  /** The node's home: a lab node's policy there may name dev plugins (dev-plugins.ts). */
  readonly home?: string;
}

/** The registry of the CLI's bundled and carried plugins, refusals reported on stderr. */
export async function loadServeRegistry(options: ServeMainOptions): Promise<Registry> {
  const warn = (line: string) => process.stderr.write(`${line}\n`);
  const dev = options.home === undefined ? { plugins: [] } : await labDevPlugins(options.home);
  if (dev.refused !== undefined) warn(dev.refused);
  const plugins = await discoverPlugins({
    cliRoot: options.cliRoot,
    warn,
    devPlugins: dev.plugins,
  });
  const outcomes = await runRegisterHooks(plugins);
  const { accepted, problems } = assembleRegistrations(outcomes, FLEET_PLUGIN_API_VERSION);
  for (const problem of problems) warn(`warning: ${problem.message}`);
  return new Registry(accepted, problems);
}
