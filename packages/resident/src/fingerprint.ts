/**
 * Whether the code on disk is still the code the resident loaded (docs/resident.md): ES modules
 * cannot be unloaded, so a resident whose CLI, core bundle or any plugin was installed, updated,
 * removed or rebuilt since it started declines the next call and ends, and that call runs in its
 * own process with the new code.
 *
 * The files watched are the ones every such change rewrites: each plugin's package.json and oclif
 * manifest (rebuilt by every build and every install), the user's plugin list, the bin script,
 * core's bundle, and a build's record (`dist/.tsbuildinfo`, in a development checkout).
 */
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface LoadedPlugin {
  readonly root: string;
}

/** The files whose change means the code changed. */
export function watchedFiles(input: {
  readonly cliRoot: string;
  readonly plugins: readonly LoadedPlugin[];
  readonly dataDir: string;
  /** A file of core's bundle (its directory is watched whole). */
  readonly coreBundleFile: string;
}): string[] {
  const files = new Set<string>([
    join(input.cliRoot, 'bin', 'run.js'),
    join(input.dataDir, 'package.json'),
  ]);
  for (const plugin of [{ root: input.cliRoot }, ...input.plugins]) {
    files.add(join(plugin.root, 'package.json'));
    files.add(join(plugin.root, 'oclif.manifest.json'));
    files.add(join(plugin.root, 'dist', '.tsbuildinfo'));
  }
  const bundle = dirname(input.coreBundleFile);
  for (const name of readdirSync(bundle)) {
    if (name.endsWith('.js') || name.endsWith('.cjs')) files.add(join(bundle, name));
  }
  return [...files].sort();
}

/** One line per file: its identity, size and time of change (`absent` for a missing one). */
export function fingerprint(files: readonly string[]): string {
  return files
    .map((file) => {
      const stats = statSync(file, { throwIfNoEntry: false, bigint: true });
      return stats === undefined
        ? `${file} absent`
        : `${file} ${stats.dev}:${stats.ino} ${stats.size} ${stats.mtimeNs} ${stats.ctimeNs}`;
    })
    .join('\n');
}
