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
// oclif is the one exception to the shared chunks: a second run writes it, with what it requires,
// as one CommonJS file beside them (oclif.cjs), which the command entry runs with V8's cached data
// (docs/adr/0012-oclif-runs-from-a-code-cached-bundle.md). Its `import(` calls are rewritten after
// esbuild, so on those few lines its source map's columns are off by the longer name.
//
// It reads tsc's output, not the TypeScript sources: what runs is exactly what tsc type-checked
// and emitted. Source maps chain back to the .ts files through tsc's own maps.
//
// Usage: node scripts/bundle.mjs [--check]
//   --check  fail (exit 1) when the bundle is older than any compiled file it is built from,
//            instead of building (a stale bundle would run code that tsc no longer emits).
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
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
    // oclif as one CommonJS file beside them, which the command entry's `oclif.js` loads with
    // V8's code cache (docs/adr/0012-oclif-runs-from-a-code-cached-bundle.md).
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

async function bundle({ dir, entries, commonjs }) {
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
    // Core's sources import oclif's values from `@oclif/core` (so their types are oclif's own);
    // in the bundle those imports reach the module that loads the CommonJS file instead.
    ...(commonjs ? { alias: { [commonjs.require]: path.join(base, commonjs.loader) } } : {}),
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
  const inputs = bundleInputs(metafile);
  if (commonjs) {
    const owner = Object.keys(inputs).find((file) => inputs[file].includes(commonjs.loader));
    if (owner === undefined || path.posix.dirname(owner) !== '.') {
      throw new Error(`${commonjs.loader} must land in an entry file of dist/bundle, not ${owner}`);
    }
    Object.assign(inputs, await bundleCommonJs(base, outdir, commonjs));
  }
  writeFileSync(path.join(outdir, INPUTS_FILE), `${JSON.stringify(inputs)}\n`);
}

// A dynamic `import(` call in the CommonJS bundle (not a string saying "import()"): the bundle runs
// inside a vm.Script, where Node.js 20 allows no `import()` without an experimental flag, so each
// call becomes `__fleetImport(` (the loader's IMPORT_PARAMETER), the importer the loading ES
// module passes in (code-cached.ts).
const DYNAMIC_IMPORT = /(?<![\w$."'`])import\((?!\))/g;

/** One CommonJS file of `commonjs.require` and what it requires; returns its inputs entry. */
async function bundleCommonJs(base, outdir, commonjs) {
  // The loader's own wrapper and importer name, from tsc's output (which the bundle is built from;
  // imported here, not at the top, so that `--check` runs before any build).
  const { IMPORT_PARAMETER, wrapBundle } = await import(
    pathToFileURL(path.join(base, 'dist', 'src', 'command', 'code-cached.js')).href
  );
  const outfile = path.join(outdir, commonjs.file);
  const { metafile } = await build({
    absWorkingDir: base,
    stdin: {
      contents: `module.exports = require(${JSON.stringify(commonjs.require)});`,
      resolveDir: base,
      sourcefile: `${commonjs.file}.entry.cjs`,
    },
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20.19',
    external: EXTERNAL,
    sourcemap: 'external',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    metafile: true,
  });
  const text = readFileSync(outfile, 'utf8');
  const rewritten = text.replace(DYNAMIC_IMPORT, `${IMPORT_PARAMETER}(`);
  if (rewritten === text)
    throw new Error(`${commonjs.file}: no import() to rewrite; check the rule`);
  // It must still compile as the body of the loader's function (code-cached.ts).
  new vm.Script(wrapBundle(rewritten));
  writeFileSync(outfile, rewritten);
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
