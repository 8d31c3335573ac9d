/**
 * The oclif that fleet's commands run on, in core's bundle. Core's sources import oclif's values
 * from `@oclif/core`, so that their types (and the public API's) are oclif's own; the bundle step
 * points those imports here (an esbuild alias), and this module requires `dist/bundle/oclif.cjs` —
 * oclif as published and what it requires, as one CommonJS file — so that a fleet process loads
 * one file for oclif, not its 160 modules (docs/adr/0025-oclif-and-core-run-through-require.md).
 * Node's compile cache, which the CLI's entry turns on (Node.js 22.1 and later), caches it like
 * any other module. Where there is no such file beside the running module it requires
 * `@oclif/core` from node_modules.
 *
 * The bundle step checks that this module lands in `dist/bundle/command.js` itself, so
 * `./oclif.cjs` is next to it.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

type Oclif = typeof import('@oclif/core');

function loadOclif(): Oclif {
  const require = createRequire(import.meta.url);
  const bundled = fileURLToPath(new URL('./oclif.cjs', import.meta.url));
  return (existsSync(bundled) ? require(bundled) : require('@oclif/core')) as Oclif;
}

const oclif = loadOclif();

export const { Args, Command, Errors, Flags, execute, settings, toConfiguredId } = oclif;
