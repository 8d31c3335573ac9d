/**
 * The author's path with no copying (docs/plugin-authoring.md, "Start from fleet plugins new"):
 * `fleet plugins new` writes a plugin package that builds with its own tsconfig, passes its own
 * tests on @fleet/testkit fake hosts and links into the operator's CLI with the real `fleet
 * plugins link`; pinned in fleet.yaml and carried by a packed runtime, it reaches a lab node
 * through `fleet upgrade` (contract §10.5) and installs its domain there like any bundled domain —
 * the host user's lines around its block kept byte for byte.
 *
 * `--wire` puts the domain into the lab's repository (fleet.yaml, its example source, the host
 * variable) and prints the node-policy lines the node's owner adds; then the `fleet` commands of
 * the generated README run as written, against the lab node.
 *
 * Each generated package's own tests include the acceptance cycle (@fleet/testkit's
 * `runAcceptance`: a lab of its own serving the plugin from its folder, install, a hand edit seen as
 * diverged and refused, adopt), run with this checkout's `fleet` as `$FLEET_BIN`.
 *
 * The generated package's `node_modules` is this repository's (a symlink): the same @fleet/core,
 * @fleet/testkit, typescript and mocha an author installs from a registry
 * (test/e2e/plugin-registry.test.ts), without one. The oclif directories are isolated for this
 * file, as in third-party-plugin.test.ts.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { driftReportSchema, packedFileName, parseManifest, parseNodePolicy } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { packedPlugin, packedRuntimeArtifact } from '../src/artifact.js';
import { FLEET_BIN, ROOT, fleet, json, tempDir } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

const run = promisify(execFile);
const NPMRC = '~/.npmrc';
const USER_TEXT = 'registry=https://registry.example.org/\r\nsave-exact=true\r\n';
const CANONICAL = '# owner: {{ host.npmrc_owner }}\nfund=false\n';
const ISOLATED = ['FLEET_DATA_DIR', 'FLEET_CONFIG_DIR', 'FLEET_CACHE_DIR'] as const;

/**
 * Builds the generated package with its own tsconfig and runs its own tests — the acceptance
 * cycle among them, on a lab of its own, with this checkout's `fleet` as `$FLEET_BIN`.
 */
async function buildAndTest(dir: string): Promise<string> {
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
    cwd: dir,
  });
  const tests = await run(
    process.execPath,
    // the generated package's `test` script without npm: mocha over the glob it names
    [join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'), 'dist/test/**/*.test.js'],
    { cwd: dir, env: { ...process.env, FLEET_BIN } },
  );
  return tests.stdout;
}

describe('e2e: a plugin written by `fleet plugins new`', function () {
  this.timeout(600_000); // building two packages, packing a runtime, an upgrade
  let tmp: { path: string; cleanup: () => Promise<void> };
  let lab: Lab;
  let npmrcDir: string;
  let nodePolicyLines = '';
  const saved = new Map<string, string | undefined>();

  before(async () => {
    tmp = await tempDir('fleet-e2e-scaffold-');
    for (const name of ISOLATED) {
      saved.set(name, process.env[name]);
      process.env[name] = join(tmp.path, 'oclif', name.replace(/^FLEET_|_DIR$/g, '').toLowerCase());
    }
    lab = await Lab.create('fleet-e2e-scaffold-lab-');
    // Up before the plugin exists: the lab's repository has every other domain, not npmrc.
    await lab.up(1);
    npmrcDir = join(tmp.path, 'npmrc');
  });
  after(async () => {
    await lab?.destroy();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await tmp?.cleanup();
  });

  it('--kind whole: a package that builds and passes its own tests', async () => {
    const dir = join(tmp.path, 'starship');
    const created = await fleet(
      [
        'plugins',
        'new',
        'fleet-plugin-starship',
        '--kind',
        'whole',
        '--path',
        '~/.config/starship.toml',
        '--dir',
        dir,
      ],
      { cwd: tmp.path },
    );
    expect(created.exitCode, created.stderr).to.equal(0);
    expect(created.stdout).to.contain('domain starship, whole file ~/.config/starship.toml');
    const tests = await buildAndTest(dir);
    expect(tests).to.match(/\b5 passing\b/);
    expect(tests).to.not.match(/pending/);
    expect(tests).to.contain(
      'installs through its validate action, sees a hand edit, adopts it, rolls back a refusal',
    );
  });

  it('--kind block --wire: wires the lab repository, builds, passes its tests, links', async () => {
    const created = await lab.run([
      'plugins',
      'new',
      'fleet-plugin-npmrc',
      '--kind',
      'block',
      '--path',
      NPMRC,
      '--dir',
      npmrcDir,
      '--wire',
      '--host',
      'node-01',
      '--json',
    ]);
    expect(created.exitCode, created.stderr).to.equal(0);
    const result = json<{ wired: { paths: string[]; commit: string; nodePolicy: string } }>(
      created,
    );
    expect(result).to.deep.include({ domain: 'npmrc', kind: 'block', path: NPMRC });
    expect(result.wired.paths).to.deep.equal([
      'fleet.yaml',
      'domains/npmrc/npmrc',
      'hosts/node-01.yaml',
    ]);
    expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(result.wired.commit);
    const manifest = parseManifest(await readFile(join(lab.repo, 'fleet.yaml'), 'utf8'));
    expect(manifest.hosts['node-01']?.domains).to.include('npmrc');
    expect(manifest.domains['npmrc']).to.deep.equal({ unattended: 'deny' });
    expect(await readFile(join(lab.repo, 'hosts', 'node-01.yaml'), 'utf8')).to.match(
      /^npmrc_owner: node-01-npmrc-owner$/m,
    );
    nodePolicyLines = result.wired.nodePolicy;
    const tests = await buildAndTest(npmrcDir);
    expect(tests).to.match(/\b6 passing\b/);
    expect(tests).to.not.match(/pending/);
    const link = await fleet(['plugins', 'link', npmrcDir, '--no-install'], { cwd: tmp.path });
    expect(link.exitCode, link.stderr).to.equal(0);
  });

  it('reaches a lab node inside the runtime generation, and installs its block there', async () => {
    // `--wire` listed npmrc on node-01, set its host variable and wrote domains/npmrc/npmrc.
    // The operator pins the plugin and packs a runtime that carries it (contract §10.5).
    const plugin = await packedPlugin(npmrcDir);
    await mkdir(join(lab.repo, 'artifacts', 'plugins'), { recursive: true });
    await copyFile(
      plugin.path,
      join(lab.repo, 'artifacts', 'plugins', packedFileName(plugin.name, plugin.version)),
    );
    const artifact = await packedRuntimeArtifact([plugin.path]);
    await copyFile(artifact.path, join(lab.repo, 'artifacts', `fleet-${artifact.version}.tgz`));
    await lab.commitEdit(
      'fleet.yaml',
      (text) =>
        `${text.replace(/^canonicalVersion: .*$/m, `canonicalVersion: ${artifact.version}`).replace(/^artifacts: \[\]\n/m, '')}` +
        `artifacts:\n  - version: ${artifact.version}\n    file: artifacts/fleet-${artifact.version}.tgz\n    sha256: ${artifact.sha256}\n    commit: ${artifact.commit}\n    signature: ${lab.signature(artifact.path)}\n` +
        `plugins:\n  - name: ${plugin.name}\n    version: ${plugin.version}\n    sha256: ${plugin.sha256}\n`,
      'the runtime that carries fleet-plugin-npmrc',
    );
    const upgrade = await lab.run(['upgrade', 'node-01', '--confirm', '--json']);
    expect(upgrade.exitCode, upgrade.stdout + upgrade.stderr).to.equal(0);
    const { catalog } = await lab.client('node-01').identity();
    expect(catalog.domains.map((d) => d.domain)).to.include('npmrc');

    // The node's owner adds the lines `--wire` printed to its node policy (contract §5.1); the
    // user has a ~/.npmrc.
    await lab.writeNode('node-01', NPMRC, USER_TEXT);
    const policyFile = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(policyFile, 'utf8'), policyFile);
    expect(nodePolicyLines).to.equal('domains:\n  npmrc: {}\n');
    await writeNodePolicy(
      lab.home('node-01'),
      { ...policy, domains: { ...policy.domains, npmrc: {} } },
      { force: true },
    );
    await lab.commitEdit('domains/npmrc/npmrc', () => CANONICAL, 'npmrc');

    // The generated README's fleet commands, as written, for this host.
    const readme = await readFile(join(npmrcDir, 'README.md'), 'utf8');
    const commands = [...readme.matchAll(/`(fleet config [^`]+)`/g)].map((m) => m[1] ?? '');
    expect(commands).to.deep.equal([
      'fleet config plan HOST npmrc',
      'fleet config install HOST npmrc --confirm',
    ]);
    for (const command of commands) {
      const args = command
        .split(' ')
        .slice(1)
        .map((word) => (word === 'HOST' ? 'node-01' : word));
      const ran = await lab.run(args);
      expect(ran.exitCode, `${command}: ${ran.stdout}${ran.stderr}`).to.equal(0);
    }
    const live = (await lab.readNode('node-01', NPMRC)).toString('utf8');
    const hostFile = await readFile(join(lab.repo, 'hosts', 'node-01.yaml'), 'utf8');
    const owner = /^npmrc_owner: "?(.*?)"?$/m.exec(hostFile)?.[1];
    expect(live).to.equal(
      `${USER_TEXT}\r\n# fleet:npmrc:begin\r\n# owner: ${owner}\r\nfund=false\r\n# fleet:npmrc:end\r\n`,
    );
    const drift = await lab.run(['drift', '--domain', 'npmrc', '--json']);
    expect(drift.exitCode, drift.stderr).to.equal(0);
    const states = driftReportSchema
      .parse(json(drift))
      .hosts[0]?.items.map((i) => [i.path, i.state]);
    expect(states).to.deep.equal([[NPMRC, 'current']]);
  });
});
