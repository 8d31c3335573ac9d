/**
 * Packing plugins into the runtime artifact (contract §10.5; scripts/bundle-runtime-plugins.mjs,
 * run by @fleet/cli's prepack with FLEET_RUNTIME_PLUGINS): what cannot travel inside the artifact
 * is refused at pack time with one line naming the plugin, and nothing is left in packages/cli.
 * The script is run on its own here (a failing case stops before the build record is read, so no
 * `npm pack` is needed); the packs that succeed are those of controller-plugins and the
 * third-party-plugin e2e.
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ROOT, tempDir } from '../src/fleet.js';

const SCRIPT = join(ROOT, 'scripts', 'bundle-runtime-plugins.mjs');

/** A plugin tarball laid out as `npm pack` lays it out (`package/…`), made with tar. */
async function tarball(dir: string, file: string, files: Record<string, string>): Promise<string> {
  const work = join(dir, `${file}.d`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(work, 'package', ...path.split('/').slice(0, -1)), { recursive: true });
    await writeFile(join(work, 'package', ...path.split('/')), content);
  }
  const out = join(dir, file);
  execFileSync('tar', ['-czf', out, '-C', work, 'package']);
  return out;
}

const pjson = (fields: Record<string, unknown>): string =>
  JSON.stringify({ version: '1.0.0', type: 'module', oclif: { hooks: {} }, ...fields });

describe('packing plugins into the runtime artifact refuses what cannot travel', function () {
  this.timeout(60_000);
  let dir: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    dir = await tempDir('fleet-runtime-plugins-pack-');
  });
  after(() => dir.cleanup());

  const cases: [string, () => Promise<string[]>, RegExp][] = [
    [
      'a dependency @fleet/cli does not ship',
      async () => [
        await tarball(dir.path, 'dep.tgz', {
          'package.json': pjson({
            name: 'fleet-plugin-dep',
            dependencies: { 'left-pad': '^1.3.0' },
          }),
        }),
      ],
      /plugin fleet-plugin-dep@1\.0\.0 depends on left-pad, which @fleet\/cli does not ship: bundle it/,
    ],
    [
      'a node_modules entry that is none of its bundled dependencies',
      async () => [
        await tarball(dir.path, 'nested.tgz', {
          'package.json': pjson({ name: 'fleet-plugin-nested' }),
          'node_modules/helper/index.js': 'export {};\n',
        }),
      ],
      /nested\.tgz carries node_modules\/helper\/index\.js, which is none of its bundleDependencies \(none\) or theirs/,
    ],
    [
      'a package beside its bundled one that the bundled one does not depend on',
      async () => [
        await tarball(dir.path, 'beside.tgz', {
          'package.json': pjson({
            name: 'fleet-plugin-beside',
            dependencies: { 'smol-toml': '~1.9.1' },
            bundleDependencies: ['smol-toml'],
          }),
          'node_modules/smol-toml/package.json': JSON.stringify({
            name: 'smol-toml',
            version: '1.9.1',
          }),
          'node_modules/stowaway/index.js': 'export {};\n',
        }),
      ],
      /beside\.tgz carries node_modules\/stowaway\/index\.js, which is none of its bundleDependencies \(smol-toml\) or theirs/,
    ],
    [
      "a copy of fleet's own packages",
      async () => [
        await tarball(dir.path, 'core.tgz', {
          'package.json': pjson({
            name: 'fleet-plugin-core',
            dependencies: { '@fleet/core': '^0.1.0' },
            bundleDependencies: ['@fleet/core'],
          }),
          'node_modules/@fleet/core/package.json': JSON.stringify({ name: '@fleet/core' }),
        }),
      ],
      /core\.tgz carries its own @fleet\/core \(node_modules\/@fleet\/core\/package\.json\): a carried plugin runs on the CLI's fleet packages/,
    ],
    [
      'a node_modules below the package top',
      async () => [
        await tarball(dir.path, 'deep.tgz', {
          'package.json': pjson({ name: 'fleet-plugin-deep' }),
          'dist/node_modules/x/index.js': 'export {};\n',
        }),
      ],
      /deep\.tgz holds dist\/node_modules\/x\/index\.js: a node_modules only at the package's top/,
    ],
    [
      'a bundled dependency its tarball lacks (packed in a workspace)',
      async () => [
        await tarball(dir.path, 'hoisted.tgz', {
          'package.json': pjson({
            name: 'fleet-plugin-hoisted',
            dependencies: { 'smol-toml': '~1.9.1' },
            bundleDependencies: ['smol-toml'],
          }),
        }),
      ],
      /plugin fleet-plugin-hoisted@1\.0\.0 bundles smol-toml but its tarball has no node_modules\/smol-toml/,
    ],
    [
      'the name of a bundled plugin',
      async () => [
        await tarball(dir.path, 'router.tgz', {
          'package.json': pjson({ name: '@fleet/plugin-router' }),
        }),
      ],
      /plugin @fleet\/plugin-router is bundled with @fleet\/cli: it cannot be carried as well/,
    ],
    [
      'the same plugin twice',
      async () => {
        const one = await tarball(dir.path, 'twice.tgz', {
          'package.json': pjson({ name: 'fleet-plugin-twice' }),
        });
        return [one, one];
      },
      /plugin fleet-plugin-twice is named twice in FLEET_RUNTIME_PLUGINS/,
    ],
    [
      'no package.json',
      async () => [await tarball(dir.path, 'bare.tgz', { 'index.js': 'export {};\n' })],
      /bare\.tgz has no package\/package\.json/,
    ],
    [
      'a file that is not a tarball',
      async () => {
        const file = join(dir.path, 'text.tgz');
        await writeFile(file, 'not a tarball\n');
        return [file];
      },
      /text\.tgz is not an npm package tarball/,
    ],
    [
      'a tarball that is not there',
      () => Promise.resolve([join(dir.path, 'absent.tgz')]),
      /cannot read the plugin tarball .*absent\.tgz \(ENOENT\)/,
    ],
  ];
  for (const [name, make, message] of cases) {
    it(`refuses ${name}`, async () => {
      const tarballs = await make();
      const run = spawnSync(process.execPath, [SCRIPT], {
        cwd: dir.path,
        env: {
          ...process.env,
          FLEET_RUNTIME_PLUGINS: tarballs.join(delimiter),
          INIT_CWD: dir.path,
        },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).to.equal(1);
      const lines = run.stderr.trim().split('\n');
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/^bundle-runtime-plugins: error: /);
      expect(lines[0]).to.match(message);
      expect(existsSync(join(ROOT, 'packages', 'cli', 'fleet-plugins'))).to.equal(false);
    });
  }
});
