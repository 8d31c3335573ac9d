/**
 * The oclif that fleet's commands run on, in core's bundle. Core's sources import oclif's values
 * from `@oclif/core`, so that their types (and the public API's) are oclif's own; the bundle step
 * points those imports here (an esbuild alias), and this module runs `dist/bundle/oclif.cjs` —
 * oclif and what it requires, as one CommonJS file — with V8's code cache when the CLI's entry
 * handed over a checked cache directory ({@link loadCodeCached};
 * docs/adr/0012-oclif-runs-from-a-code-cached-bundle.md). Where there is no such file beside the
 * running module it loads `@oclif/core` from node_modules.
 *
 * The bundle step checks that this module lands in `dist/bundle/command.js` itself, so
 * `./oclif.cjs` is next to it.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { handedCacheDirectory, loadCodeCached } from './code-cached.js';

type Oclif = typeof import('@oclif/core');

function loadOclif(): Oclif {
  const bundled = fileURLToPath(new URL('./oclif.cjs', import.meta.url));
  if (!existsSync(bundled)) return createRequire(import.meta.url)('@oclif/core') as Oclif;
  return loadCodeCached(bundled, (specifier) => import(specifier), {
    cacheDirectory: handedCacheDirectory(),
  }).exports as Oclif;
}

const oclif = loadOclif();

export const { Args, Command, Errors, Flags, execute, settings, toConfiguredId } = oclif;
