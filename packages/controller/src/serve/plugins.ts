/**
 * The plugins a controller serves, found and registered without oclif (contract §14, "means": the
 * controller process loads neither oclif nor the CLI). It reads what oclif reads and in the same
 * order — the CLI's own package (the root plugin), the user plugins listed in the oclif data
 * directory's `package.json` (installed, then linked; a user plugin shadows a bundled one of the
 * same name), then the bundled plugins of the CLI's `oclif.plugins` and their own `oclif.plugins`
 * — and fires each one's `fleet:register` hook as oclif's `runHook` does: the module's hook
 * export, called with `{ apiVersion }`, bounded by a timeout, a failure captured against its
 * plugin. `assembleRegistrations` (core) then judges the outcomes exactly as for the CLI, so the
 * controller and the CLI accept and refuse the same plugins (docs/plugin-authoring.md §10–11).
 *
 * A plugin whose package.json cannot be read is reported on stderr with its path and skipped, as
 * oclif does; nothing here takes the controller down.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  FLEET_PLUGIN_API_VERSION,
  REGISTER_HOOK,
  type HookOutcome,
  type PluginRef,
} from '@fleet/core';

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

type UserEntry = { readonly name: string; readonly type: 'user' | 'link'; readonly root?: string };

export interface DiscoverOptions {
  /** The CLI package's directory (the root plugin: `@fleet/cli`). */
  readonly cliRoot: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Where a plugin that cannot be read is reported (stderr). */
  readonly warn: (line: string) => void;
  /** Per-hook timeout, as the CLI's `runHook` call (10 s). */
  readonly timeoutMs?: number;
}

async function readManifest(root: string): Promise<PluginManifest> {
  return JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as PluginManifest;
}

/** oclif's data directory: `$FLEET_DATA_DIR`, else `$XDG_DATA_HOME/<dirname>` or the platform's. */
export function oclifDataDir(pjson: PluginManifest, env: NodeJS.ProcessEnv): string {
  const bin = typeof pjson.oclif?.bin === 'string' ? pjson.oclif.bin : 'fleet';
  const dirname = typeof pjson.oclif?.dirname === 'string' ? pjson.oclif.dirname : bin;
  const scoped = env[`${bin.replace(/[@]/g, '').replace(/[/-]/g, '_').toUpperCase()}_DATA_DIR`];
  if (scoped) return scoped;
  const home = env['HOME'] || homedir();
  const base =
    env['XDG_DATA_HOME'] ||
    (process.platform === 'win32' && env['LOCALAPPDATA']) ||
    join(home, '.local', 'share');
  return join(base, dirname);
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

async function readUserEntries(dataDir: string): Promise<UserEntry[]> {
  let pjson: PluginManifest;
  try {
    pjson = await readManifest(dataDir);
  } catch {
    return []; // no user plugins
  }
  const listed = Array.isArray(pjson.oclif?.plugins) ? (pjson.oclif.plugins as unknown[]) : [];
  const entries = listed.filter(
    (entry): entry is UserEntry =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as UserEntry).name === 'string' &&
      ((entry as UserEntry).type === 'user' || (entry as UserEntry).type === 'link'),
  );
  // Installed plugins first, then linked ones: oclif's order.
  return [...entries.filter((e) => e.type === 'user'), ...entries.filter((e) => e.type === 'link')];
}

/** Every plugin oclif would load for the CLI at `cliRoot`, each once, by name. */
export async function discoverPlugins(options: DiscoverOptions): Promise<FoundPlugin[]> {
  const env = options.env ?? process.env;
  const found = new Map<string, FoundPlugin>();
  const add = async (root: string, type: string): Promise<FoundPlugin | undefined> => {
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
      ref: { name, version: typeof pjson.version === 'string' ? pjson.version : '0.0.0', type },
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
  const dataDir = oclifDataDir(cli.pjson, env);
  for (const entry of await readUserEntries(dataDir)) {
    if (found.has(entry.name)) continue;
    let root: string;
    try {
      root =
        entry.type === 'link' && entry.root
          ? entry.root
          : await findPackageRoot(entry.name, dataDir);
    } catch (error) {
      options.warn(`Warning: plugin ${entry.name}: ${(error as Error).message}`);
      continue;
    }
    const plugin = await add(root, entry.type);
    if (plugin) await addChildren(plugin, entry.type);
  }
  await addChildren(cli, 'core');
  return [...found.values()];
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
