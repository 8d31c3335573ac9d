/**
 * The plugins a controller serves, found and registered without oclif (contract §14, "means": the
 * controller process loads neither oclif nor the CLI): the CLI's own package (the root plugin), the
 * bundled plugins of the CLI's `oclif.plugins` and their own `oclif.plugins` — read as oclif reads
 * them — and the third-party plugins the running generation carries, verified against the
 * generation's own build record (carried-plugins.ts, contract §10.5). A node loads plugins only
 * from its generation: the oclif data directory's user plugins (`fleet plugins install|link`) are
 * the operator's CLI's business and never reach a controller.
 *
 * Each plugin's `fleet:register` hook is fired as oclif's `runHook` does: the module's hook
 * export, called with `{ apiVersion }`, bounded by a timeout, a failure captured against its
 * plugin. `assembleRegistrations` (core) then judges the outcomes exactly as for the CLI, so the
 * controller and the CLI accept and refuse the same plugins (docs/plugin-authoring.md §10–11).
 *
 * A plugin whose package.json cannot be read, or a carried plugin that does not verify, is
 * reported on stderr naming it and skipped; nothing here takes the controller down.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  FLEET_PLUGIN_API_VERSION,
  REGISTER_HOOK,
  type HookOutcome,
  type PluginRef,
} from '@fleet/core/node';
import { carriedPlugins } from './carried-plugins.js';
import type { DevPlugin } from './dev-plugins.js';

/** What oclif's package.json `oclif` section says about one plugin, as far as fleet reads it. */
interface PluginManifest {
  readonly name?: unknown;
  readonly version?: unknown;
  readonly dependencies?: unknown;
  readonly oclif?: {
    readonly dirname?: unknown;
    readonly bin?: unknown;
    readonly plugins?: unknown;
    readonly hooks?: Record<string, unknown>;
  };
}

interface FoundPlugin {
  readonly ref: PluginRef;
  readonly root: string;
  readonly pjson: PluginManifest;
}

export interface DiscoverOptions {
  /** The CLI package's directory (the root plugin: `@fleet/cli`). */
  readonly cliRoot: string;
  /** Where a plugin that cannot be read is reported (stderr). */
  readonly warn: (line: string) => void;
  /** Per-hook timeout, as the CLI's `runHook` call (10 s). */
  readonly timeoutMs?: number;
  /** A lab node's dev plugins (dev-plugins.ts), loaded from their folders after the others. */
  readonly devPlugins?: readonly DevPlugin[];
}

async function readManifest(root: string): Promise<PluginManifest> {
  return JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as PluginManifest;
}

/** `node_modules/<name>` nearest above `from` (how oclif finds an installed plugin's root). */
async function findPackageRoot(name: string, from: string): Promise<string> {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    try {
      await readFile(join(candidate, 'package.json'));
      return candidate;
    } catch {
      // not here: one level up
    }
    if (dirname(dir) === dir) throw new Error(`could not find package ${name} from ${from}`);
  }
}

function namesIn(list: unknown, dependencies: unknown): string[] {
  if (!Array.isArray(list)) return [];
  const deps = typeof dependencies === 'object' && dependencies !== null ? dependencies : {};
  // oclif loads the listed plugins that are dependencies of the package that lists them.
  return list.filter(
    (name): name is string => typeof name === 'string' && Object.hasOwn(deps, name),
  );
}

/** The CLI at `cliRoot`, its bundled plugins and the plugins it carries, each once, by name. */
export async function discoverPlugins(options: DiscoverOptions): Promise<FoundPlugin[]> {
  const found = new Map<string, FoundPlugin>();
  const add = async (
    root: string,
    type: string,
    sha256?: string,
  ): Promise<FoundPlugin | undefined> => {
    let pjson: PluginManifest;
    try {
      pjson = await readManifest(root);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      options.warn(`Warning: cannot read plugin ${join(root, 'package.json')} (${code}): skipped`);
      return undefined;
    }
    const name = typeof pjson.name === 'string' ? pjson.name : root;
    if (found.has(name)) return undefined;
    const plugin = {
      ref: {
        name,
        version: typeof pjson.version === 'string' ? pjson.version : '0.0.0',
        type,
        ...(sha256 === undefined ? {} : { sha256 }),
      },
      root,
      pjson,
    };
    found.set(name, plugin);
    return plugin;
  };
  const addChildren = async (parent: FoundPlugin, type: string): Promise<void> => {
    for (const name of namesIn(parent.pjson.oclif?.plugins, parent.pjson.dependencies)) {
      if (found.has(name)) continue;
      let root: string;
      try {
        root = await findPackageRoot(name, parent.root);
      } catch (error) {
        options.warn(`Warning: plugin ${name}: ${(error as Error).message}`);
        continue;
      }
      const child = await add(root, type);
      if (child) await addChildren(child, type);
    }
  };

  const cli = await add(options.cliRoot, 'core');
  if (!cli) return [];
  await addChildren(cli, 'core');
  const carried = await carriedPlugins(options.cliRoot);
  for (const line of carried.refused) options.warn(line);
  for (const { pin, root } of carried.verified) {
    if (found.has(pin.name)) {
      // A carried plugin never replaces a bundled one: the bundled one is part of the CLI.
      options.warn(
        `warning: plugin ${pin.name}@${pin.version} is refused: a bundled plugin has that name`,
      );
      continue;
    }
    // Its own dependencies are bundled in its tarball or resolve from the CLI's node_modules.
    await add(root, 'generation', pin.sha256);
  }
  for (const dev of options.devPlugins ?? []) await addDevPlugin(dev, found, add, options.warn);
  return [...found.values()];
}

/** A lab node's dev plugin: its folder's package must have the name the policy gives it. */
async function addDevPlugin(
  dev: DevPlugin,
  found: ReadonlyMap<string, FoundPlugin>,
  add: (root: string, type: string) => Promise<FoundPlugin | undefined>,
  warn: (line: string) => void,
): Promise<void> {
  const refuse = (why: string) => warn(`warning: lab dev plugin ${dev.name} is refused: ${why}`);
  if (found.has(dev.name)) {
    // Never replaces a bundled or carried plugin: those are the runtime's.
    refuse('a plugin of the runtime has that name');
    return;
  }
  let name: unknown;
  try {
    ({ name } = await readManifest(dev.root));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    refuse(`cannot read ${join(dev.root, 'package.json')} (${code})`);
    return;
  }
  if (name !== dev.name) {
    refuse(`${join(dev.root, 'package.json')} names ${String(name)}`);
    return;
  }
  await add(dev.root, 'dev');
}

/** The hook targets a plugin declares for `event`: a path, or `{ target, identifier }`. */
function hookTargets(plugin: FoundPlugin, event: string): { target: string; identifier: string }[] {
  const declared = plugin.pjson.oclif?.hooks?.[event];
  const list = Array.isArray(declared)
    ? (declared as unknown[])
    : declared === undefined
      ? []
      : [declared];
  return list.flatMap((entry) => {
    if (typeof entry === 'string') return [{ target: entry, identifier: 'default' }];
    if (
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as { target?: unknown }).target === 'string'
    ) {
      const { target, identifier } = entry as { target: string; identifier?: unknown };
      return [{ target, identifier: typeof identifier === 'string' ? identifier : 'default' }];
    }
    return [];
  });
}

function withTimeout<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms.`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Fires `fleet:register` in every plugin that declares it, all at once; one outcome per hook. */
export async function runRegisterHooks(
  plugins: readonly FoundPlugin[],
  timeoutMs = 10_000,
): Promise<HookOutcome[]> {
  const outcomes = await Promise.all(
    plugins.map(async (plugin) => {
      const results: HookOutcome[] = [];
      for (const { target, identifier } of hookTargets(plugin, REGISTER_HOOK)) {
        try {
          // The plugin seam, by path (packages/controller/README.md, Lazy imports kept).
          const module = (await import(pathToFileURL(join(plugin.root, target)).href)) as Record<
            string,
            unknown
          >;
          // As oclif: the named export, else (for `default`) the default or the first function.
          const hook =
            module[identifier] ??
            (identifier === 'default'
              ? Object.values(module).find((value) => typeof value === 'function')
              : undefined);
          if (typeof hook !== 'function') continue;
          const result: unknown = await withTimeout(
            timeoutMs,
            Promise.resolve(
              (hook as (options: unknown) => unknown)({ apiVersion: FLEET_PLUGIN_API_VERSION }),
            ),
          );
          results.push({ plugin: plugin.ref, ok: true, result });
        } catch (error) {
          results.push({ plugin: plugin.ref, ok: false, error });
        }
      }
      return results;
    }),
  );
  return outcomes.flat();
}
