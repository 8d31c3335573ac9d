#!/usr/bin/env node
// Bundles @fleet/core's compiled entry points into dist/bundle/ (docs/contract.md §14; the why and
// the rules are in docs/adr/0011-core-ships-a-bundle.md). Run by `npm run build` after `tsc -b`
// and before the oclif manifests, which import the commands and so core.
//
// What importers load is the bundle: core's package.json `exports` point at dist/bundle/*.js, and
// the types stay tsc's (dist/src/*.d.ts). One esbuild run over every entry with code splitting,
// so the entries share their chunks: a value is one object whichever entry it came through, and a
// process holds one copy of core and of what core bundles (zod, oclif, ulid, p-limit, …).
// Left out, and loaded from node_modules as before: node's own modules, yaml (core loads it by
// name on first use, src/yaml.ts: a verb answered from .git/fleet-cache never parses YAML), and
// what the bundled code only names for an optional feature it never uses here (typescript,
// ts-node, pnpapi).
//
// It reads tsc's output, not the TypeScript sources: what runs is exactly what tsc type-checked
// and emitted. Source maps chain back to the .ts files through tsc's own maps.
//
// Usage: node scripts/bundle.mjs [--check]
//   --check  fail (exit 1) when the bundle is older than any compiled file it is built from,
//            instead of building (a stale bundle would run code that tsc no longer emits).
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each bundled package: its directory and its entry points (name → compiled file). */
export const BUNDLES = [
  {
    dir: 'packages/core',
    entries: {
      index: 'dist/src/index.js',
      node: 'dist/src/node.js',
      command: 'dist/src/command/index.js',
      zod: 'dist/src/zod.js',
    },
  },
];

/** Beside the bundle: the modules inside each of its files (bundleInputs). */
export const INPUTS_FILE = 'inputs.json';

/** Loaded from node_modules, never bundled (see the header). */
const EXTERNAL = ['typescript', 'ts-node', 'pnpapi', 'yaml'];

// CommonJS modules inside an ESM bundle reach node's modules through `require`: give them one.
const BANNER = [
  "import { createRequire as __fleetCreateRequire } from 'node:module';",
  'const require = __fleetCreateRequire(import.meta.url);',
].join('\n');

async function bundle({ dir, entries }) {
  const base = path.join(root, dir);
  const outdir = path.join(base, 'dist', 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  const entryPoints = Object.fromEntries(
    Object.entries(entries).map(([name, file]) => [name, path.join(base, file)]),
  );
  const { metafile } = await build({
    absWorkingDir: base,
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    external: EXTERNAL,
    banner: { js: BANNER },
    // Written beside each file, not linked from it: Node copies every linked map into each
    // process's coverage file under NODE_V8_COVERAGE (4 MiB a CLI call), which a suite of
    // thousands of CLI processes turns into gigabytes for c8 to load (ADR 0011).
    sourcemap: 'external',
    // Whitespace and syntax only, names kept: a third less text for Node to read, decode and
    // parse at every start (`fleet --help` 8 % faster in an interleaved run).
    minifyWhitespace: true,
    minifySyntax: true,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
    metafile: true,
  });
  writeFileSync(path.join(outdir, INPUTS_FILE), `${JSON.stringify(bundleInputs(metafile))}\n`);
}

/**
 * What each output file holds: its path under dist/bundle/ → the modules bundled into it, relative
 * to the package (`dist/src/…` for core's own, `node_modules/…` for a dependency's). What a
 * bundled process loads is then still answerable module by module: the cold-start bench checks
 * that `--help` loads none of core's domain modules, and the modules bench counts them.
 */
function bundleInputs(metafile) {
  const inputs = {};
  for (const [output, { inputs: bundled }] of Object.entries(metafile.outputs)) {
    if (output.endsWith('.map')) continue;
    inputs[path.posix.relative('dist/bundle', output)] = Object.keys(bundled)
      .map((input) => input.replace(/^(?:\.\.\/)+node_modules\//, 'node_modules/'))
      .sort();
  }
  return inputs;
}

/** The newest modification time of the compiled files under `dir` (recursively). */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestUnder(full));
    else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

function staleBundles() {
  return BUNDLES.filter(({ dir, entries }) => {
    const base = path.join(root, dir);
    const stamp = path.join(base, 'dist', 'bundle', `${Object.keys(entries)[0]}.js`);
    if (!existsSync(stamp)) return true;
    return newestUnder(path.join(base, 'dist', 'src')) > statSync(stamp).mtimeMs;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const stale = staleBundles();
    for (const { dir } of stale) {
      console.error(`${dir}/dist/bundle is older than ${dir}/dist/src: run \`npm run build\``);
    }
    process.exit(stale.length === 0 ? 0 : 1);
  }
  for (const target of BUNDLES) await bundle(target);
}
