#!/usr/bin/env node
// Packs third-party plugins into the runtime artifact (contract §10.5; core runtime/plugins.ts):
// run in @fleet/cli's `prepack` after build-record.mjs, it reads the plugin tarballs named by
// FLEET_RUNTIME_PLUGINS (paths of `npm pack` tarballs of the plugins, separated by the platform's
// path delimiter, relative to the directory `npm pack` was run from), and writes into packages/cli
// - fleet-plugins/tarballs/<sha256>.tgz, each tarball as given;
// - fleet-plugins/packages/<name>/, each tarball's `package/` unpacked (what the node loads);
// - the plugins' `{ name, version, sha256 }` into the build record fleet-build.json,
// so `npm pack -w packages/cli` carries them and a node that runs the artifact loads them from its
// generation, each verified against that record. `postpack` (`--clean`) removes fleet-plugins/.
//
// A plugin may carry dependencies of its own (docs/plugin-authoring.md, "Dependencies of a carried
// plugin"): named in its `bundleDependencies`, `npm pack` puts them into its tarball under
// `package/node_modules/`, so the pinned sha256 — and the release signature over the artifact —
// cover them; they are unpacked with the rest of the package, and Node resolves them from there.
//
// It fails loudly (and so does the pack) when a tarball cannot be read, is not an npm package,
// names a plugin twice or a plugin the CLI bundles, carries a node_modules entry that is none of
// its bundled dependencies (or their dependencies) or a copy of fleet's own packages, lacks a
// dependency it says it bundles (`npm pack` in a workspace leaves hoisted ones out), or depends on
// a package that neither it bundles nor the CLI ships.
//
// Usage: FLEET_RUNTIME_PLUGINS=a.tgz[:b.tgz…] npm pack -w packages/cli
//        node scripts/bundle-runtime-plugins.mjs [--clean]
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
const cliDir = path.join(root, 'packages', 'cli');
const pluginsDir = path.join(cliDir, 'fleet-plugins');
const recordFile = path.join(cliDir, 'fleet-build.json');
const MARKER = '.fleet-runtime-plugins';
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

class PluginsError extends Error {}
const fail = (message) => {
  throw new PluginsError(message);
};

function clean() {
  if (!existsSync(pluginsDir)) return false;
  if (!existsSync(path.join(pluginsDir, MARKER))) {
    fail(`packages/cli/fleet-plugins exists but was not made by this script (no ${MARKER})`);
  }
  rmSync(pluginsDir, { recursive: true, force: true });
  return true;
}

/** The tarballs FLEET_RUNTIME_PLUGINS names, resolved from where `npm pack` was run. */
function requestedTarballs() {
  const list = (process.env.FLEET_RUNTIME_PLUGINS ?? '').split(path.delimiter).filter(Boolean);
  const from = process.env.INIT_CWD ?? process.cwd();
  return list.map((file) => path.resolve(from, file));
}

/** `node_modules/a/…` → `a`, `node_modules/@s/a/…` → `@s/a`; `null` for a path outside them. */
function topModule(rel) {
  const parts = rel.split('/');
  if (parts[0] !== 'node_modules' || parts.length < 3) return null;
  return parts[1].startsWith('@') ? `${parts[1]}/${parts[2]}` : parts[1];
}

/**
 * The names a plugin bundles: its `bundleDependencies` (or `bundledDependencies`; `true` means all
 * of its dependencies), then, transitively, the dependencies of each bundled package as its
 * tarball holds it (npm hoists them into the same node_modules).
 */
function bundledClosure(pjson, files) {
  const declared = pjson.bundleDependencies ?? pjson.bundledDependencies ?? [];
  const queue = declared === true ? Object.keys(pjson.dependencies ?? {}) : [...declared];
  const closure = new Set();
  while (queue.length > 0) {
    const name = queue.shift();
    if (closure.has(name)) continue;
    closure.add(name);
    const manifest = files.get(`node_modules/${name}/package.json`);
    if (!manifest) continue;
    const deps = JSON.parse(manifest.toString('utf8'));
    queue.push(
      ...Object.keys(deps.dependencies ?? {}),
      ...Object.keys(deps.optionalDependencies ?? {}),
    );
  }
  return {
    declared: declared === true ? Object.keys(pjson.dependencies ?? {}) : declared,
    closure,
  };
}

/** Refuses node_modules entries that are not the plugin's bundled dependencies. */
function checkBundled(file, pjson, files) {
  const { declared, closure } = bundledClosure(pjson, files);
  for (const rel of files.keys()) {
    if (!rel.split('/').includes('node_modules')) continue;
    const top = topModule(rel);
    if (top === null) fail(`${file} holds ${rel}: a node_modules only at the package's top`);
    if (top.startsWith('@fleet/')) {
      fail(
        `${file} carries its own ${top} (${rel}): a carried plugin runs on the CLI's fleet packages, never a copy`,
      );
    }
    if (!closure.has(top)) {
      fail(
        `${file} carries ${rel}, which is none of its bundleDependencies (${declared.join(', ') || 'none'}) or theirs`,
      );
    }
  }
  for (const name of declared) {
    if (!files.has(`node_modules/${name}/package.json`)) {
      fail(
        `plugin ${pjson.name}@${pjson.version} bundles ${name} but its tarball has no node_modules/${name}: pack it where ${name} is installed in its own node_modules (npm pack in a workspace leaves hoisted dependencies out)`,
      );
    }
  }
  return new Set(declared);
}

/** One plugin tarball, read and checked: its pin and its package's files. */
async function readPlugin(file, readTgz, cliManifest) {
  let bytes;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    fail(`cannot read the plugin tarball ${file} (${error.code ?? error.message})`);
  }
  let entries;
  try {
    entries = readTgz(bytes);
  } catch (error) {
    fail(`${file} is not an npm package tarball: ${error.message}`);
  }
  const files = new Map();
  for (const entry of entries) {
    if (entry.type !== 'file') continue;
    if (!entry.path.startsWith('package/')) fail(`${file} holds ${entry.path}, outside package/`);
    const rel = entry.path.slice('package/'.length);
    files.set(rel, entry.data);
  }
  const pjsonData = files.get('package.json');
  if (!pjsonData) fail(`${file} has no package/package.json`);
  const pjson = JSON.parse(pjsonData.toString('utf8'));
  if (typeof pjson.name !== 'string' || !NAME.test(pjson.name)) {
    fail(`${file}: package.json name ${JSON.stringify(pjson.name)} is not an npm package name`);
  }
  if (typeof pjson.version !== 'string' || !SEMVER.test(pjson.version)) {
    fail(
      `${file}: package.json version ${JSON.stringify(pjson.version)} is not a semantic version`,
    );
  }
  const bundled = checkBundled(file, pjson, files);
  const shipped = new Set(Object.keys(cliManifest.dependencies ?? {}));
  const needed = [
    ...Object.keys(pjson.dependencies ?? {}),
    ...Object.keys(pjson.peerDependencies ?? {}).filter(
      (dep) => pjson.peerDependenciesMeta?.[dep]?.optional !== true,
    ),
  ];
  const unshipped = needed.filter((dep) => !shipped.has(dep) && !bundled.has(dep));
  if (unshipped.length > 0) {
    fail(
      `plugin ${pjson.name}@${pjson.version} depends on ${unshipped.join(', ')}, which @fleet/cli does not ship: bundle it (bundleDependencies) or use only the CLI's own dependencies`,
    );
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { pin: { name: pjson.name, version: pjson.version, sha256 }, bytes, files };
}

async function bundle() {
  const tarballs = requestedTarballs();
  if (tarballs.length === 0) return;
  const { readTgz } = await import('@fleet/controller');
  const cliManifest = JSON.parse(readFileSync(path.join(cliDir, 'package.json'), 'utf8'));
  const bundled = new Set(cliManifest.oclif?.plugins ?? []);
  const plugins = [];
  for (const file of tarballs) {
    const plugin = await readPlugin(file, readTgz, cliManifest);
    if (bundled.has(plugin.pin.name) || plugin.pin.name === cliManifest.name) {
      fail(`plugin ${plugin.pin.name} is bundled with @fleet/cli: it cannot be carried as well`);
    }
    if (plugins.some((p) => p.pin.name === plugin.pin.name)) {
      fail(`plugin ${plugin.pin.name} is named twice in FLEET_RUNTIME_PLUGINS`);
    }
    plugins.push(plugin);
  }
  if (!existsSync(recordFile))
    fail('packages/cli/fleet-build.json is missing: run build-record.mjs first');
  const record = JSON.parse(readFileSync(recordFile, 'utf8'));
  mkdirSync(path.join(pluginsDir, 'tarballs'), { recursive: true });
  writeFileSync(
    path.join(pluginsDir, MARKER),
    'Made by scripts/bundle-runtime-plugins.mjs (prepack); removed by postpack.\n',
  );
  for (const { pin, bytes, files } of plugins) {
    writeFileSync(path.join(pluginsDir, 'tarballs', `${pin.sha256}.tgz`), bytes);
    const dir = path.join(pluginsDir, 'packages', ...pin.name.split('/'));
    for (const [rel, data] of files) {
      const target = path.join(dir, ...rel.split('/'));
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, data);
    }
    process.stderr.write(
      `bundle-runtime-plugins: ${pin.name}@${pin.version} (sha256 ${pin.sha256}), ${files.size} files\n`,
    );
  }
  record.plugins = plugins.map((p) => p.pin);
  writeFileSync(recordFile, `${JSON.stringify(record)}\n`);
}

try {
  if (process.argv.includes('--clean')) {
    if (clean())
      process.stderr.write('bundle-runtime-plugins: removed packages/cli/fleet-plugins\n');
  } else {
    clean();
    await bundle();
  }
} catch (error) {
  if (!(error instanceof PluginsError)) throw error;
  // A failed prepack skips postpack: leave nothing half-made behind.
  rmSync(pluginsDir, { recursive: true, force: true });
  process.stderr.write(`bundle-runtime-plugins: error: ${error.message}\n`);
  process.exitCode = 1;
}
