#!/usr/bin/env node
// Bundles @fleet/core's compiled entry points into dist/bundle/ (docs/contract.md §14; the why and
// the rules are in docs/adr/0011-core-ships-a-bundle.md). Run by `npm run build` after `tsc -b`
// and before the oclif manifests, which import the commands and so core.
//
// What importers load is the bundle: core's package.json `exports` point at dist/bundle/*.js, and
// the types stay tsc's (dist/src/*.d.ts). A process holds one copy of core and of what core
// bundles (zod, ulid, p-limit, …), whichever entry a value came through:
// - core.cjs: the `index`, `node`, `plugin` and `zod` entries as one CommonJS file, each entry evaluated
//   when first asked for, run with V8's cached data by loader.js; index.js, node.js, plugin.js and zod.js are
//   generated ES module facades over it (docs/adr/0013-core-runs-from-one-code-cached-file.md);
// - command.js: the `command` entry as a small ES module of its own (`--help` loads nothing else
//   of core), whose imports of the rest of core go through the index facade;
// - oclif.cjs: oclif and what it requires, one CommonJS file that command.js runs with V8's cached
//   data (docs/adr/0012-oclif-runs-from-a-code-cached-bundle.md).
// The `import(` calls of both CommonJS files are rewritten after esbuild, so on those few lines
// their source maps' columns are off by the longer name.
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
      plugin: 'dist/src/plugin.js',
      command: 'dist/src/command/index.js',
      zod: 'dist/src/zod.js',
    },
    // Every entry but `command` in one CommonJS file, each evaluated when first asked for; their
    // entry files are ES module facades over it, through one loader. `command` stays a small ES
    // module of its own, which reaches the rest of core through the `index` facade
    // (docs/adr/0013-core-runs-from-one-code-cached-file.md).
    core: { file: 'core.cjs', loader: 'loader.js', separate: 'command', through: 'index' },
    // oclif as one CommonJS file beside them, which the command entry's `oclif.js` loads with
    // V8's code cache (docs/adr/0012-oclif-runs-from-a-code-cached-bundle.md).
    commonjs: { file: 'oclif.cjs', require: '@oclif/core', loader: 'dist/src/command/oclif.js' },
  },
];

/** Beside the bundle: the modules inside each of its files (bundleInputs). */
export const INPUTS_FILE = 'inputs.json';

/** Loaded from node_modules, never bundled (see the header). */
const EXTERNAL = ['typescript', 'ts-node', 'pnpapi', 'yaml'];

/** What `import.meta.url` becomes inside a CommonJS file: a variable holding the file's URL. */
const META_URL = '__fleetMetaUrl';

// CommonJS modules inside an ESM bundle reach node's modules through `require`: give them one.
const BANNER = [
  "import { createRequire as __fleetCreateRequire } from 'node:module';",
  'const require = __fleetCreateRequire(import.meta.url);',
].join('\n');

async function bundle({ dir, entries, core, commonjs }) {
  const base = path.join(root, dir);
  const outdir = path.join(base, 'dist', 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  // The loader's own wrapper and importer name, from tsc's output (which the bundle is built from;
  // imported here, not at the top, so that `--check` runs before any build).
  const loader = await import(
    pathToFileURL(path.join(base, 'dist', 'src', 'command', 'code-cached.js')).href
  );
  const { [core.separate]: separate, ...shared } = entries;
  const inputs = await bundleSeparate(base, outdir, core, separate, commonjs);
  Object.assign(inputs, await bundleCore(base, outdir, shared, core, separate, loader));
  Object.assign(inputs, await bundleLoader(base, outdir, core));
  for (const [name, names] of Object.entries(await entryExports(base, shared))) {
    writeFileSync(path.join(outdir, `${name}.js`), facade(core.loader, name, names));
    inputs[`${name}.js`] = [];
  }
  Object.assign(inputs, await bundleCommonJs(base, outdir, commonjs, loader));
  writeFileSync(path.join(outdir, INPUTS_FILE), `${JSON.stringify(inputs)}\n`);
}

/**
 * The separate entry (`command`) as one ES module: the modules of its own directory inside, every
 * other module of core it imports — all of them imported inside functions, when a command runs —
 * through the `through` facade, so that a process holds one copy of core (what it takes from them
 * must be exported by that entry: every command's first run would meet a name that is not);
 * oclif's imports reach its loader (`commonjs.loader`), which must be inside, so that
 * `./oclif.cjs` is beside it.
 */
async function bundleSeparate(base, outdir, core, file, commonjs) {
  const own = path.dirname(path.join(base, file));
  const { metafile } = await build({
    absWorkingDir: base,
    entryPoints: { [core.separate]: path.join(base, file) },
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    external: EXTERNAL,
    banner: { js: BANNER },
    alias: { [commonjs.require]: path.join(base, commonjs.loader) },
    plugins: [
      {
        name: 'core-through-facade',
        setup(builder) {
          builder.onResolve({ filter: /^\.\.?\// }, ({ path: specifier, resolveDir }) => {
            const resolved = path.resolve(resolveDir, specifier);
            if (resolved.startsWith(`${own}${path.sep}`)) return undefined;
            return { path: `./${core.through}.js`, external: true };
          });
        },
      },
    ],
    sourcemap: 'external',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    metafile: true,
  });
  const inputs = bundleInputs(metafile);
  if (!inputs[`${core.separate}.js`]?.includes(commonjs.loader)) {
    throw new Error(
      `${commonjs.loader} must be inside ${core.separate}.js, beside ${commonjs.file}`,
    );
  }
  return inputs;
}

/** The names each entry exports, as esbuild sees them (an ES module build, not written). */
async function entryExports(base, entries) {
  const { metafile } = await build({
    absWorkingDir: base,
    entryPoints: Object.fromEntries(
      Object.entries(entries).map(([name, file]) => [name, path.join(base, file)]),
    ),
    outdir: path.join(base, 'dist', 'bundle'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    external: [...EXTERNAL, '@oclif/core'],
    write: false,
    logLevel: 'warning',
    metafile: true,
  });
  const exported = {};
  for (const output of Object.values(metafile.outputs)) {
    if (output.entryPoint === undefined) continue;
    const name = Object.keys(entries).find((key) => entries[key] === output.entryPoint);
    if (name !== undefined) exported[name] = [...output.exports].sort();
  }
  const missing = Object.keys(entries).filter((name) => exported[name] === undefined);
  if (missing.length > 0) throw new Error(`no exports found for ${missing.join(', ')}`);
  return exported;
}

/**
 * The other entries as one CommonJS file: `module.exports` holds one function per entry, which
 * requires (and so evaluates, once) that entry and what it imports — esbuild wraps each module so
 * that it runs when first required. `import.meta.url` becomes the file's own URL. Nothing of the
 * separate entry's directory may be inside (it would be a second copy), nor oclif.
 */
async function bundleCore(base, outdir, entries, core, separateFile, loader) {
  const outfile = path.join(outdir, core.file);
  const { metafile } = await build({
    absWorkingDir: base,
    stdin: {
      contents: `module.exports = { ${Object.entries(entries)
        .map(([name, file]) => `${name}: () => require(${JSON.stringify(`./${file}`)})`)
        .join(', ')} };`,
      resolveDir: base,
      sourcefile: `${core.file}.entry.cjs`,
    },
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20.19',
    external: EXTERNAL,
    define: { 'import.meta.url': META_URL },
    banner: { js: `var ${META_URL} = require('node:url').pathToFileURL(__filename).href;` },
    // Written beside the file, not linked from it: Node copies every linked map into each
    // process's coverage file under NODE_V8_COVERAGE (4 MiB a CLI call), which a suite of
    // thousands of CLI processes turns into gigabytes for c8 to load (ADR 0011).
    sourcemap: 'external',
    // Whitespace and syntax only, names kept: a third less text for Node to read, decode and
    // parse at every start (`fleet --help` 8 % faster in an interleaved run).
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    metafile: true,
  });
  const inputs = bundleInputs(metafile);
  const separateDir = `${path.posix.dirname(separateFile)}/`;
  const strays = inputs[core.file].filter(
    (input) => input.startsWith(separateDir) || input.startsWith('node_modules/@oclif/'),
  );
  if (strays.length > 0) {
    throw new Error(`${core.file} must not hold ${strays.join(', ')}`);
  }
  await writeRewritten(outfile, core.file, loader);
  return inputs;
}

/**
 * The loader the facades share (an ES module): runs the CommonJS file once per process, with V8's
 * code cache when the CLI's entry handed a cache directory over, and records the entries asked
 * for under `fleet.coreEntries` (the cold-start bench's tracer reads it).
 */
async function bundleLoader(base, outdir, core) {
  const { metafile } = await build({
    absWorkingDir: base,
    stdin: {
      contents: [
        "import { fileURLToPath } from 'node:url';",
        "import { handedCacheDirectory, loadCodeCached } from './dist/src/command/code-cached.js';",
        'const asked = new Set();',
        "globalThis[Symbol.for('fleet.coreEntries')] = asked;",
        `const entries = loadCodeCached(fileURLToPath(new URL(${JSON.stringify(`./${core.file}`)}, import.meta.url)), (specifier) => import(specifier), {`,
        '  cacheDirectory: handedCacheDirectory(),',
        '}).exports;',
        'export function entry(name) {',
        '  asked.add(name);',
        '  return entries[name]();',
        '}',
      ].join('\n'),
      resolveDir: base,
      sourcefile: `${core.loader}.entry.js`,
    },
    outfile: path.join(outdir, core.loader),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    sourcemap: 'external',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    metafile: true,
  });
  return bundleInputs(metafile);
}

/** An entry's ES module: its exports, read once from the entry the loader evaluated. */
function facade(loader, name, names) {
  const lines = [
    `// Generated by scripts/bundle.mjs: @fleet/core's \`${name}\` entry, from ${loader}'s one copy of core.`,
    `import { entry } from './${loader}';`,
    `const m = entry(${JSON.stringify(name)});`,
    ...names.map((exported, i) => `const e${i} = m[${JSON.stringify(exported)}];`),
    `export { ${names.map((exported, i) => `e${i} as ${exported}`).join(', ')} };`,
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Where each dynamic `import(…)` call of `text` starts, found by TypeScript's parser: a CommonJS
 * file of the bundle runs inside a vm.Script, where Node.js 20 allows no `import()` without an
 * experimental flag, so each call becomes `__fleetImport(…)` (the loader's IMPORT_PARAMETER), the
 * importer the loading ES module passes in (code-cached.ts). A parser, not a pattern: core's own
 * text holds `import(` inside strings and template literals (the plugin scaffold's templates,
 * oclif's messages), which must stay as they are.
 */
export async function dynamicImportStarts(text) {
  const { default: ts } = await import('typescript');
  const file = ts.createSourceFile(
    'bundle.cjs',
    text,
    ts.ScriptTarget.Latest,
    false,
    ts.ScriptKind.JS,
  );
  const starts = [];
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      starts.push(node.expression.getStart(file));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return starts;
}

/**
 * Two edits of oclif's start-up, each an exact text that must be found once (an oclif upgrade
 * that changes it fails the build here, to be looked at again), for what every `fleet` call paid
 * before any command ran (docs/adr/0015-two-edits-of-oclif-start-up.md):
 * - a plugin's commands sorted by code unit, not `localeCompare`: its first call builds ICU's
 *   collator, 7 ms of a 300 ms call; oclif's help sorts what it lists itself, and command ids
 *   (lower-case words, `:` and `-`) sort the same both ways;
 * - a core plugin named without a glob matched by equality: minimatch built ~180 patterns (every
 *   dependency against every name in `oclif.plugins`), 5 ms; a name with any character minimatch
 *   gives a meaning (a wildcard, a class or brace, an escape, an extglob's parenthesis, a leading
 *   `!` or a `#`) still goes to minimatch.
 */
/** A name in `oclif.plugins` that minimatch would read as more than itself (the second edit). */
export const GLOB_SPECIAL = /[*?[\]{}()#\\]|^!/;

export const OCLIF_EDITS = [
  {
    file: '@oclif/core/lib/config/plugin.js',
    find: '.sort((a, b) => a.id.localeCompare(b.id));',
    replace: '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));',
  },
  {
    file: '@oclif/core/lib/config/plugin-loader.js',
    find: 'patterns.some((w) => (0, minimatch_1.minimatch)(p, w))',
    replace: `patterns.some((w) => (${GLOB_SPECIAL}.test(w) ? (0, minimatch_1.minimatch)(p, w) : p === w))`,
  },
];

/** `text` with `edit` applied, or an error naming the file when its text is not there once. */
export function applyEdit(text, edit) {
  const at = text.indexOf(edit.find);
  if (at === -1 || text.indexOf(edit.find, at + 1) !== -1) {
    throw new Error(`${edit.file}: the text to edit is not there exactly once: ${edit.find}`);
  }
  return `${text.slice(0, at)}${edit.replace}${text.slice(at + edit.find.length)}`;
}

const oclifEdits = {
  name: 'oclif-edits',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/]/ }, (args) => {
      const file = args.path.split(path.sep).join('/');
      const edit = OCLIF_EDITS.find((candidate) => file.endsWith(`node_modules/${candidate.file}`));
      if (edit === undefined) return undefined;
      return { contents: applyEdit(readFileSync(args.path, 'utf8'), edit), loader: 'js' };
    });
  },
};

/** One CommonJS file of `commonjs.require` and what it requires; returns its inputs entry. */
async function bundleCommonJs(base, outdir, commonjs, loader) {
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
    plugins: [oclifEdits],
    sourcemap: 'external',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    metafile: true,
  });
  await writeRewritten(outfile, commonjs.file, loader);
  return bundleInputs(metafile);
}

/**
 * Rewrites the dynamic `import(` calls of a CommonJS file of the bundle (dynamicImportStarts) with
 * the loader's own importer name, and checks that the text still compiles as the body of the
 * loader's function (code-cached.ts, from tsc's output). A file may hold none: esbuild inlines a
 * bundled module's lazy import, and only one of an external module stays a call (core's bundle had
 * one, the lab supervisor's `node:net`, until that client moved to `@fleet/lab`).
 */
async function writeRewritten(outfile, name, { IMPORT_PARAMETER, wrapBundle }) {
  let text = readFileSync(outfile, 'utf8');
  const starts = await dynamicImportStarts(text);
  for (const start of starts.sort((a, b) => b - a)) {
    if (!text.startsWith('import', start)) throw new Error(`${name}: no import at ${start}`);
    text = `${text.slice(0, start)}${IMPORT_PARAMETER}${text.slice(start + 'import'.length)}`;
  }
  new vm.Script(wrapBundle(text));
  writeFileSync(outfile, text);
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
