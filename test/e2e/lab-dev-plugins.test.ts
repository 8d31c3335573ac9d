/**
 * The lab's dev loop (contract §13, docs/plugin-authoring.md "The dev loop"): a plugin written by
 * `fleet plugins new` and linked into the operator's CLI with `fleet plugins link` is served by a
 * lab brought up afterwards — its node loads it from the plugin's folder, no pack, pin, runtime
 * build or upgrade — and a rebuilt plugin is what the node runs after `fleet lab restart`. A build
 * that no longer loads fails the restart, naming the host and why; the fix and another restart
 * bring the node back. The same policy in a home that is not a lab node's is refused: a controller
 * the lab supervisor did not start never loads a dev plugin.
 *
 * The oclif directories are isolated for this file (the link is this file's own), and the
 * generated package's node_modules is this repository's, as in plugin-scaffold.test.ts.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { driftReportSchema, parseNodePolicy } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { ROOT, fleet, json, tempDir } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

const run = promisify(execFile);
const NPMRC = '~/.npmrc';
const ISOLATED = ['FLEET_DATA_DIR', 'FLEET_CONFIG_DIR', 'FLEET_CACHE_DIR'] as const;

describe('e2e: a lab serves a linked plugin from its folder (the dev loop)', function () {
  this.timeout(300_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let lab: Lab;
  let plugin: string;
  const saved = new Map<string, string | undefined>();

  async function catalogVersion(): Promise<string | undefined> {
    const { catalog } = await lab.client('node-01').identity();
    return catalog.domains.find((d) => d.domain === 'npmrc')?.version;
  }

  before(async () => {
    tmp = await tempDir('fleet-e2e-dev-loop-');
    for (const name of ISOLATED) {
      saved.set(name, process.env[name]);
      process.env[name] = join(tmp.path, 'oclif', name.replace(/^FLEET_|_DIR$/g, '').toLowerCase());
    }
    plugin = join(tmp.path, 'fleet-plugin-npmrc');
    const created = await fleet(
      ['plugins', 'new', 'fleet-plugin-npmrc', '--kind', 'block', '--path', NPMRC],
      { cwd: tmp.path },
    );
    expect(created.exitCode, created.stderr).to.equal(0);
    await symlink(join(ROOT, 'node_modules'), join(plugin, 'node_modules'), 'dir');
    await run(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'],
      {
        cwd: plugin,
      },
    );
    const link = await fleet(['plugins', 'link', plugin, '--no-install'], { cwd: tmp.path });
    expect(link.exitCode, link.stderr).to.equal(0);
    lab = await Lab.create('fleet-e2e-dev-loop-lab-');
    await lab.up(1);
  });
  after(async () => {
    await lab?.destroy();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await tmp?.cleanup();
  });

  it('lab up after a link serves the domain: drift, install, drift current', async () => {
    const policyFile = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(policyFile, 'utf8'), policyFile);
    expect(policy.lab).to.deep.equal({
      devPlugins: [{ name: 'fleet-plugin-npmrc', root: plugin }],
    });
    expect(policy.domains['npmrc']).to.deep.equal({ unattended: 'deny' });
    expect(await catalogVersion()).to.equal('0.1.0');

    const before = await lab.run(['drift', '--domain', 'npmrc', '--json']);
    expect(before.exitCode, before.stderr).to.equal(1);
    const items = driftReportSchema.parse(json(before)).hosts[0]?.items ?? [];
    expect(items.map((i) => [i.path, i.state])).to.deep.equal([[NPMRC, 'missing']]);
    const install = await lab.run(['config', 'install', 'node-01', 'npmrc', '--confirm']);
    expect(install.exitCode, install.stdout + install.stderr).to.equal(0);
    expect((await lab.readNode('node-01', NPMRC)).toString('utf8')).to.match(
      /^# fleet:npmrc:begin\n[^]*# owner: node-01-npmrc-owner\n# fleet:npmrc:end\n$/,
    );
    const after = await lab.run(['drift', '--domain', 'npmrc']);
    expect(after.exitCode, after.stdout + after.stderr).to.equal(0);
  });

  it('a rebuilt plugin is what the node runs after fleet lab restart', async () => {
    const manifest = join(plugin, 'package.json');
    await writeFile(
      manifest,
      (await readFile(manifest, 'utf8')).replace('"version": "0.1.0"', '"version": "0.2.0"'),
    );
    expect(await catalogVersion()).to.equal('0.1.0'); // a running controller keeps what it loaded
    const restart = await lab.run(['lab', 'restart', '--dir', lab.dir]);
    expect(restart.exitCode, restart.stderr).to.equal(0);
    expect(restart.stdout).to.match(/^Restarted node-01: controller pid \d+$/m);
    expect(await catalogVersion()).to.equal('0.2.0');
  });

  it('a build that no longer loads fails the restart naming the host; fixed, it serves again', async () => {
    const register = join(plugin, 'dist', 'src', 'register.js');
    const good = await readFile(register, 'utf8');
    await writeFile(register, `${good}\nthrow new Error('half-written build');\n`);
    const failed = await lab.run(['lab', 'restart', '--dir', lab.dir, '--json']);
    expect(failed.exitCode).to.equal(6);
    const error = json<{ error: { code: string; message: string } }>(failed).error;
    expect(error.code).to.equal('ACTION_FAILED');
    expect(error.message).to.match(/^node-01: /);
    expect(error.message).to.contain('failed to register: half-written build');

    await writeFile(register, good);
    const fixed = await lab.run(['lab', 'restart', '--dir', lab.dir]);
    expect(fixed.exitCode, fixed.stderr).to.equal(0);
    expect(await catalogVersion()).to.equal('0.2.0');
  });

  it('the same policy in a home that is no lab node: the dev plugin is refused, nothing served', async () => {
    const policyFile = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(policyFile, 'utf8'), policyFile);
    const home = join(tmp.path, 'elsewhere', 'home');
    await mkdir(home, { recursive: true });
    await writeNodePolicy(home, policy);
    const served = await fleet(
      ['controller', 'serve', '--home', home, '--node-id', 'node-09', '--port', '0'],
      { env: { FLEET_LAB_SUPERVISOR: undefined } },
    );
    expect(served.exitCode).to.equal(2);
    expect(served.stderr).to.contain(
      'warning: the lab dev plugins fleet-plugin-npmrc are refused: this controller is not a lab node',
    );
    expect(served.stderr).to.match(/NODE_POLICY_INVALID|no loaded plugin provides domain npmrc/);
  });
});
