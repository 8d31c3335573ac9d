/**
 * A carried plugin that brings a dependency of its own (docs/plugin-authoring.md, "Dependencies of
 * a carried plugin"): `examples/fleet-plugin-starship` checks ~/.config/starship.toml with
 * smol-toml, named in its `bundleDependencies`. Packed as an author packs it — from a checkout
 * with its dependencies installed in its own node_modules (`npm pack` in this monorepo's workspace
 * would leave the hoisted library out, and the runtime pack refuses that) — its tarball holds the
 * library, so the sha256 fleet.yaml pins and the release signature over the runtime artifact
 * cover it. The runtime carries it to a lab node, whose controller loads the plugin and its
 * library from the generation and runs the TOML check there on install.
 */
import { expect } from 'chai';
import { cp, mkdir, readFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packedFileName, parseNodePolicy } from '@fleet/core';
import { readTgz, writeNodePolicy } from '@fleet/controller';
import { packedPlugin, packedRuntimeArtifact, type PackedPlugin } from '../src/artifact.js';
import { ROOT, fleet, tempDir } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

const EXAMPLE = join(ROOT, 'examples', 'fleet-plugin-starship');
const STARSHIP = '~/.config/starship.toml';
const ISOLATED = ['FLEET_DATA_DIR', 'FLEET_CONFIG_DIR', 'FLEET_CACHE_DIR'] as const;

/** The built example as its own checkout: package.json, README, dist/src, node_modules/smol-toml. */
async function standaloneCheckout(into: string): Promise<string> {
  const dir = join(into, 'fleet-plugin-starship');
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  for (const file of ['package.json', 'README.md']) {
    await copyFile(join(EXAMPLE, file), join(dir, file));
  }
  await cp(join(EXAMPLE, 'dist', 'src'), join(dir, 'dist', 'src'), { recursive: true });
  await cp(join(ROOT, 'node_modules', 'smol-toml'), join(dir, 'node_modules', 'smol-toml'), {
    recursive: true,
  });
  return dir;
}

describe('e2e: a carried plugin with a dependency of its own', function () {
  this.timeout(600_000); // packing the runtime, then an upgrade
  let tmp: { path: string; cleanup: () => Promise<void> };
  let lab: Lab;
  let plugin: PackedPlugin;
  const saved = new Map<string, string | undefined>();

  before(async () => {
    tmp = await tempDir('fleet-e2e-plugin-deps-');
    for (const name of ISOLATED) {
      saved.set(name, process.env[name]);
      process.env[name] = join(tmp.path, 'oclif', name.replace(/^FLEET_|_DIR$/g, '').toLowerCase());
    }
    lab = await Lab.create('fleet-e2e-plugin-deps-lab-');
  });
  after(async () => {
    await lab?.destroy();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await tmp?.cleanup();
  });

  it("npm pack puts the library into the plugin's tarball", async () => {
    plugin = await packedPlugin(await standaloneCheckout(tmp.path));
    const paths = readTgz(await readFile(plugin.path)).map((entry) => entry.path);
    expect(paths).to.include('package/node_modules/smol-toml/package.json');
    expect(paths).to.include('package/dist/src/toml.js');
  });

  it('the runtime carries it to a lab node, which installs with the check it brings', async () => {
    // The operator's CLI knows the domain (linked), so the lab lists it on node-01; its node, as
    // a real one, serves only what its runtime carries (no dev plugin: lab-dev-plugins.test.ts).
    const link = await fleet(['plugins', 'link', EXAMPLE, '--no-install'], { cwd: tmp.path });
    expect(link.exitCode, link.stderr).to.equal(0);
    await lab.up(1, ['--no-dev-plugins']);
    await mkdir(join(lab.repo, 'artifacts', 'plugins'), { recursive: true });
    await copyFile(
      plugin.path,
      join(lab.repo, 'artifacts', 'plugins', packedFileName(plugin.name, plugin.version)),
    );
    const artifact = await packedRuntimeArtifact([plugin.path]);
    await copyFile(artifact.path, join(lab.repo, 'artifacts', `fleet-${artifact.version}.tgz`));
    // The runtime artifact holds the library inside the plugin's own folder.
    const carried = readTgz(await readFile(artifact.path)).map((entry) => entry.path);
    expect(carried).to.include(
      'package/fleet-plugins/packages/fleet-plugin-starship/node_modules/smol-toml/package.json',
    );
    await lab.commitEdit(
      'fleet.yaml',
      (text) =>
        `${text.replace(/^canonicalVersion: .*$/m, `canonicalVersion: ${artifact.version}`).replace(/^artifacts: \[\]\n/m, '')}` +
        `artifacts:\n  - version: ${artifact.version}\n    file: artifacts/fleet-${artifact.version}.tgz\n    sha256: ${artifact.sha256}\n    commit: ${artifact.commit}\n    signature: ${lab.signature(artifact.path)}\n` +
        `plugins:\n  - name: ${plugin.name}\n    version: ${plugin.version}\n    sha256: ${plugin.sha256}\n`,
      'the runtime that carries fleet-plugin-starship',
    );
    const upgrade = await lab.run(['upgrade', 'node-01', '--confirm', '--json']);
    expect(upgrade.exitCode, upgrade.stdout + upgrade.stderr).to.equal(0);
    const { catalog } = await lab.client('node-01').identity();
    expect((catalog.plugins ?? []).map((p) => [p.name, p.sha256])).to.deep.equal([
      [plugin.name, plugin.sha256],
    ]);

    const policyFile = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(policyFile, 'utf8'), policyFile);
    await writeNodePolicy(
      lab.home('node-01'),
      { ...policy, domains: { ...policy.domains, starship: {} } },
      { force: true },
    );
    await lab.commitEdit(
      'domains/starship/starship.toml',
      () => 'add_newline = false\n\n[character]\nsuccess_symbol = "[>](bold green)"\n',
      'starship',
    );
    // The node half imports the installer, whose TOML check imports smol-toml: from the
    // plugin's folder in the generation (no other copy is on the node).
    const install = await lab.run([
      'config',
      'install',
      'node-01',
      'starship',
      '--confirm',
      '--json',
    ]);
    expect(install.exitCode, install.stdout + install.stderr).to.equal(0);
    expect((await lab.readNode('node-01', STARSHIP)).toString('utf8')).to.equal(
      'add_newline = false\n\n[character]\nsuccess_symbol = "[>](bold green)"\n',
    );
  });
});
