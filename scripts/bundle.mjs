#!/usr/bin/env node
// Bundles @fleet/core's compiled entry points into dist/bundle/ (docs/contract.md §14; the why and
// the rules are in docs/adr/0011-core-ships-a-bundle.md). Run by `npm run build` after `tsc -b`
// and before the oclif manifests, which import the commands and so core.
//
// What importers load is the bundle: core's package.json `exports` point at dist/bundle/*.js, and
// the types stay tsc's (dist/src/*.d.ts). A process holds one copy of core and of what core
// bundles (zod, ulid, p-limit, …), whichever entry a value came through:
// - index.js, node.js, plugin.js, zod.js and di.js: those entries built together as ES modules
//   with esbuild's code splitting, what two of them share in chunk files beside them
//   (docs/adr/0028-core-ships-es-modules.md);
// - command.js: the `command` entry as a small ES module of its own (`--help` loads nothing else
//   of core), whose imports of the rest of core go through index.js;
// - oclif.cjs: oclif as published and what it requires, one CommonJS file that command.js
//   requires with Node's own `require` (docs/adr/0025-oclif-and-core-run-through-require.md).
// Node's compile cache (turned on by the CLI's entry, Node.js 22.1 and later) caches every one of
// them like any module.
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
      plugin: 'dist/src/plugin.js',
      command: 'dist/src/command/index.js',
      zod: 'dist/src/zod.js',
      di: 'dist/src/di.js',
    },
    // Every entry but `command` built together, split into shared chunks; `command` stays a small
    // ES module of its own, which reaches the rest of core through the `index` entry
    // (docs/adr/0028-core-ships-es-modules.md).
    core: { separate: 'command', through: 'index' },
    // oclif as one CommonJS file beside them, which the command entry's `oclif.js` requires.
    commonjs: { file: 'oclif.cjs', require: '@oclif/core', loader: 'dist/src/command/oclif.js' },
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

/** What every file of the bundle is built with: for the Node floor, source maps beside it. */
const BUILD = {
  bundle: true,
  platform: 'node',
  target: 'node20.19',
  external: EXTERNAL,
  // Written beside each file, not linked from it: Node copies every linked map into each
  // process's coverage file under NODE_V8_COVERAGE (4 MiB a CLI call), which a suite of
  // thousands of CLI processes turns into gigabytes for c8 to load (ADR 0011).
  sourcemap: 'external',
  // Whitespace and syntax only, names kept: less text for Node to read and parse at every start.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  metafile: true,
};

/** Core's ES module files: the shared options, and a `require` for the CommonJS inside. */
const ES_MODULES = { ...BUILD, format: 'esm', banner: { js: BANNER } };

async function bundle({ dir, entries, core, commonjs }) {
  const base = path.join(root, dir);
  const outdir = path.join(base, 'dist', 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  const { [core.separate]: separate, ...shared } = entries;
  const inputs = await bundleSeparate(base, outdir, core, separate, commonjs);
  Object.assign(inputs, await bundleShared(base, outdir, shared, separate));
  Object.assign(inputs, await bundleCommonJs(base, outdir, commonjs));
  writeFileSync(path.join(outdir, INPUTS_FILE), `${JSON.stringify(inputs)}\n`);
}

/**
 * The separate entry (`command`) as one ES module: the modules of its own directory inside, every
 * other module of core it imports — all of them imported inside functions, when a command runs —
 * through the `through` entry, so that a process holds one copy of core (what it takes from them
 * must be exported by that entry: every command's first run would meet a name that is not);
 * oclif's imports reach its loader (`commonjs.loader`), which must be inside, so that
 * `./oclif.cjs` is beside it.
 */
async function bundleSeparate(base, outdir, core, file, commonjs) {
  const own = path.dirname(path.join(base, file));
  const { metafile } = await build({
    ...ES_MODULES,
    absWorkingDir: base,
    entryPoints: { [core.separate]: path.join(base, file) },
    outdir,
    alias: { [commonjs.require]: path.join(base, commonjs.loader) },
    plugins: [
      {
        name: 'core-through-entry',
        setup(builder) {
          builder.onResolve({ filter: /^\.\.?\// }, ({ path: specifier, resolveDir }) => {
            const resolved = path.resolve(resolveDir, specifier);
            if (resolved.startsWith(`${own}${path.sep}`)) return undefined;
            return { path: `./${core.through}.js`, external: true };
          });
        },
      },
    ],
  });
  const inputs = bundleInputs(metafile);
  if (!inputs[`${core.separate}.js`]?.includes(commonjs.loader)) {
    throw new Error(
      `${commonjs.loader} must be inside ${core.separate}.js, beside ${commonjs.file}`,
    );
  }
  return inputs;
}

/**
 * The other entries built together as ES modules with esbuild's code splitting: each entry's file
 * holds what only it uses, and what two entries share sits in a chunk file both import, so a
 * process holds one copy of each module whichever entries it loads (the controller loads `node`
 * and none of `index`'s operator-side modules). Nothing of the separate entry's directory may be
 * inside (it would be a second copy), nor oclif.
 */
async function bundleShared(base, outdir, entries, separateFile) {
  const { metafile } = await build({
    ...ES_MODULES,
    absWorkingDir: base,
    entryPoints: Object.fromEntries(
      Object.entries(entries).map(([name, file]) => [name, path.join(base, file)]),
    ),
    outdir,
    splitting: true,
    chunkNames: 'chunk-[hash]',
  });
  const inputs = bundleInputs(metafile);
  const separateDir = `${path.posix.dirname(separateFile)}/`;
  for (const [output, held] of Object.entries(inputs)) {
    const strays = held.filter(
      (input) => input.startsWith(separateDir) || input.startsWith('node_modules/@oclif/'),
    );
    if (strays.length > 0) throw new Error(`${output} must not hold ${strays.join(', ')}`);
  }
  return inputs;
}

/** One CommonJS file of `commonjs.require` and what it requires; returns its inputs entry. */
async function bundleCommonJs(base, outdir, commonjs) {
  const outfile = path.join(outdir, commonjs.file);
  const { metafile } = await build({
    ...BUILD,
    absWorkingDir: base,
    stdin: {
      contents: `module.exports = require(${JSON.stringify(commonjs.require)});`,
      resolveDir: base,
      sourcefile: `${commonjs.file}.entry.cjs`,
    },
    outfile,
    format: 'cjs',
  });
  return bundleInputs(metafile);
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
