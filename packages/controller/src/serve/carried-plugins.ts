/**
 * The third-party plugins a runtime generation carries (contract §10.5; core runtime/plugins.ts),
 * found and verified before the controller loads any of their code. The generation's own build
 * record (`fleet-build.json` beside the CLI's package.json) lists each as `{ name, version,
 * sha256 }`; a listed plugin is loaded only when
 * - its tarball `fleet-plugins/tarballs/<sha256>.tgz` has that sha256,
 * - the unpacked package `fleet-plugins/packages/<name>/` is exactly the tarball's `package/`
 *   (every file byte for byte, nothing more), and
 * - its package.json names that name and version.
 * Anything else refuses that plugin, on stderr naming it, and the controller serves on without it
 * (as for any refused plugin, docs/plugin-authoring.md); `fleet version` then shows it as drift.
 *
 * A CLI that is not packed (a workspace checkout: the lab's controllers, tests) has no build record
 * and so carries no plugins: it serves its bundled ones only. Nothing outside the CLI's own
 * directory — no oclif data directory, no environment variable — adds a plugin to a node.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BUILD_RECORD_FILE,
  carriedPluginDir,
  carriedPluginTarball,
  isFleetError,
  parseBuildRecord,
  type PinnedPlugin,
} from '@fleet/core/node';
import { readTgz } from '../generations/tar.js';

/** A carried plugin that verified: where its package sits. */
export interface VerifiedPlugin {
  readonly pin: PinnedPlugin;
  readonly root: string;
}

export interface CarriedPlugins {
  readonly verified: readonly VerifiedPlugin[];
  /** One line per refused plugin (or an unreadable build record), for stderr. */
  readonly refused: readonly string[];
}

/** The build record's plugin list; none without a record (an unpacked CLI). */
async function listedPins(cliRoot: string): Promise<PinnedPlugin[]> {
  let text: string;
  try {
    text = await readFile(join(cliRoot, BUILD_RECORD_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return parseBuildRecord(text, join(cliRoot, BUILD_RECORD_FILE)).plugins;
}

/** Every file under `dir`, `/`-separated and relative to it. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = `${prefix}${entry.name}`;
    if (entry.isDirectory()) out.push(...(await filesUnder(join(dir, entry.name), `${rel}/`)));
    else out.push(rel);
  }
  return out;
}

/** Why the carried copy of `pin` does not verify; `null` when it does. */
export async function carriedPluginProblem(
  cliRoot: string,
  pin: PinnedPlugin,
): Promise<string | null> {
  const tarballPath = carriedPluginTarball(pin.sha256);
  let tarball: Buffer;
  try {
    tarball = await readFile(join(cliRoot, ...tarballPath.split('/')));
  } catch (error) {
    return `its tarball ${tarballPath} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  const sha256 = createHash('sha256').update(tarball).digest('hex');
  if (sha256 !== pin.sha256) return `its tarball ${tarballPath} has sha256 ${sha256}`;
  const root = join(cliRoot, ...carriedPluginDir(pin.name).split('/'));
  const packed = new Map<string, Buffer>();
  try {
    for (const entry of readTgz(tarball)) {
      if (entry.type !== 'file') continue;
      if (!entry.path.startsWith('package/'))
        return `its tarball holds ${entry.path}, outside package/`;
      packed.set(entry.path.slice('package/'.length), entry.data);
    }
  } catch (error) {
    return `its tarball ${tarballPath} is not readable: ${isFleetError(error) || error instanceof Error ? error.message : String(error)}`;
  }
  let present: string[];
  try {
    present = await filesUnder(root);
  } catch (error) {
    return `${carriedPluginDir(pin.name)} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  const extra = present.filter((file) => !packed.has(file));
  if (extra.length > 0) {
    return `${carriedPluginDir(pin.name)} holds ${extra.slice(0, 3).join(', ')}, not in its tarball`;
  }
  for (const [file, data] of packed) {
    let live: Buffer;
    try {
      live = await readFile(join(root, ...file.split('/')));
    } catch {
      return `${carriedPluginDir(pin.name)}/${file} of its tarball is missing`;
    }
    if (!live.equals(data)) return `${carriedPluginDir(pin.name)}/${file} differs from its tarball`;
  }
  const pjson = JSON.parse(packed.get('package.json')?.toString('utf8') ?? '{}') as {
    name?: unknown;
    version?: unknown;
  };
  if (pjson.name !== pin.name || pjson.version !== pin.version) {
    return `its package.json names ${String(pjson.name)} ${String(pjson.version)}`;
  }
  return null;
}

/** The plugins the CLI at `cliRoot` carries, each verified against its build record. */
export async function carriedPlugins(cliRoot: string): Promise<CarriedPlugins> {
  let pins: PinnedPlugin[];
  try {
    pins = await listedPins(cliRoot);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { verified: [], refused: [`warning: no carried plugin is loaded: ${why}`] };
  }
  const verified: VerifiedPlugin[] = [];
  const refused: string[] = [];
  for (const pin of pins) {
    const problem = await carriedPluginProblem(cliRoot, pin);
    if (problem === null) {
      verified.push({ pin, root: join(cliRoot, ...carriedPluginDir(pin.name).split('/')) });
    } else {
      refused.push(
        `warning: plugin ${pin.name}@${pin.version} is refused: the generation's build record pins sha256 ${pin.sha256}, but ${problem}`,
      );
    }
  }
  return { verified, refused };
}
