/**
 * Plugins that travel to the nodes (contract §10.5): fleet.yaml's `plugins: [{ name, version,
 * sha256 }]` pins each third-party plugin by its packed tarball (`npm pack` of the plugin), and the
 * runtime artifact carries them. Pure: where a carried plugin sits inside the artifact, and the
 * comparison of what fleet.yaml names with what an artifact (its build record) or a running node
 * (its catalog) carries. The pin's shape is `schemas/runtime-plugins.ts`.
 *
 * Inside the artifact's package directory (written at pack time by
 * `scripts/bundle-runtime-plugins.mjs`, read by the node from its generation):
 * - `fleet-plugins/packages/<name>/` — the plugin's package, unpacked from its tarball; Node
 *   resolves its `@fleet/core` from the artifact's own `node_modules` further up, and the
 *   dependencies it bundles (`bundleDependencies`) from its own `node_modules`, unpacked with it;
 * - `fleet-plugins/tarballs/<sha256>.tgz` — the tarball itself, so the node checks the pin's
 *   sha256 and that the unpacked tree is exactly the tarball's;
 * - the build record (`fleet-build.json`) lists each as `{ name, version, sha256 }`.
 *
 * In the fleet repository the operator keeps each pinned tarball at
 * `artifacts/plugins/<npm pack file name>` (`fleet-plugin-gitconfig-0.1.0.tgz`,
 * `@acme/fleet-x` → `acme-fleet-x-1.2.0.tgz`), beside the runtime artifacts; `fleet validate`
 * checks its sha256 against the pin.
 */
import type { PinnedPlugin } from '../schemas/runtime-plugins.js';

/** The directory of carried plugins inside the artifact's package directory. */
export const RUNTIME_PLUGINS_DIR = 'fleet-plugins';
/** Where the operator's pinned plugin tarballs live in the fleet repository. */
export const PLUGIN_TARBALLS_DIR = 'artifacts/plugins';

/** The carried plugin's package directory, relative to the artifact's package directory. */
export function carriedPluginDir(name: string): string {
  return `${RUNTIME_PLUGINS_DIR}/packages/${name}`;
}

/** The carried plugin's tarball, relative to the artifact's package directory. */
export function carriedPluginTarball(sha256: string): string {
  return `${RUNTIME_PLUGINS_DIR}/tarballs/${sha256}.tgz`;
}

/** The file name `npm pack` gives a package's tarball (`@a/b` 1.0.0 → `a-b-1.0.0.tgz`). */
export function packedFileName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/** Where fleet.yaml's pin of `plugin` expects its tarball in the fleet repository. */
export function pinnedTarballPath(plugin: Pick<PinnedPlugin, 'name' | 'version'>): string {
  return `${PLUGIN_TARBALLS_DIR}/${packedFileName(plugin.name, plugin.version)}`;
}

/** A named plugin that the other side lacks or has in another version or build. */
export interface PluginMismatch {
  readonly expected: PinnedPlugin;
  /** What is carried under that name; `null` when nothing is. */
  readonly actual: PinnedPlugin | null;
}

/**
 * Every plugin of `named` (fleet.yaml) that `carried` (an artifact's build record, a node's
 * catalog) lacks or carries with another version or sha256, in `named`'s order. Pure. A carried
 * plugin fleet.yaml does not name is no mismatch: fleet.yaml names what must be there.
 */
export function pluginMismatches(
  named: readonly PinnedPlugin[],
  carried: readonly PinnedPlugin[],
): PluginMismatch[] {
  return named.flatMap((expected) => {
    const actual = carried.find((plugin) => plugin.name === expected.name) ?? null;
    if (actual && actual.version === expected.version && actual.sha256 === expected.sha256) {
      return [];
    }
    return [{ expected, actual }];
  });
}

const short = (sha256: string): string => sha256.slice(0, 12);

/** `fleet-plugin-gitconfig 0.1.0 (sha256 0123456789ab)`. */
export function describePin(plugin: PinnedPlugin): string {
  return `${plugin.name} ${plugin.version} (sha256 ${short(plugin.sha256)})`;
}

/** One line: what fleet.yaml names and what `where` (e.g. "the artifact x.tgz") has instead. */
export function describePluginMismatch(mismatch: PluginMismatch, where: string): string {
  const { expected, actual } = mismatch;
  const has =
    actual === null
      ? `${where} carries no plugin ${expected.name}`
      : `${where} carries ${describePin(actual)}`;
  return `fleet.yaml names plugin ${describePin(expected)}, but ${has}`;
}
