/**
 * The author's path with no copying (docs/plugin-authoring.md, "Start from fleet plugins new"): `fleet plugins new` writes a
 * plugin package that builds with its own tsconfig, passes its own tests on @fleet/testkit fake
 * hosts, links into fleet with the real `fleet plugins link`, and installs its domain on a lab
 * node like any bundled domain — the host user's lines around its block kept byte for byte.
 *
 * The generated package's `node_modules` is this repository's (a symlink): the same @fleet/core,
 * @fleet/testkit, typescript and mocha an author gets from the packed tarballs, without the
 * network. The oclif directories are isolated for this file, as in third-party-plugin.test.ts.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { driftReportSchema, parseNodePolicy } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { ROOT, fleet, json, tempDir } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

const run = promisify(execFile);
const NPMRC = '~/.npmrc';
const USER_TEXT = 'registry=https://registry.example.org/\r\nsave-exact=true\r\n';
const CANONICAL = '# owner: {{ host.npmrc_owner }}\nfund=false\n';
const ISOLATED = ['FLEET_DATA_DIR', 'FLEET_CONFIG_DIR', 'FLEET_CACHE_DIR'] as const;

/** Builds the generated package with its own tsconfig and runs its own tests. */
async function buildAndTest(dir: string): Promise<string> {
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
    cwd: dir,
  });
  const tests = await run(
    process.execPath,
    [join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js')],
    {
      cwd: dir,
    },
  );
  return tests.stdout;
}

describe('e2e: a plugin written by `fleet plugins new`', function () {
  this.timeout(180_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let lab: Lab;
  const saved = new Map<string, string | undefined>();

  before(async () => {
    tmp = await tempDir('fleet-e2e-scaffold-');
    for (const name of ISOLATED) {
      saved.set(name, process.env[name]);
      process.env[name] = join(tmp.path, 'oclif', name.replace(/^FLEET_|_DIR$/g, '').toLowerCase());
    }
    lab = await Lab.create('fleet-e2e-scaffold-lab-');
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
    expect(await buildAndTest(dir)).to.match(/\b4 passing\b/);
  });

  it('--kind block: builds, passes its tests, links, and installs its block on a lab node', async () => {
    const dir = join(tmp.path, 'npmrc');
    const created = await fleet(
      [
        'plugins',
        'new',
        'fleet-plugin-npmrc',
        '--kind',
        'block',
        '--path',
        NPMRC,
        '--dir',
        dir,
        '--json',
      ],
      { cwd: tmp.path },
    );
    expect(created.exitCode, created.stderr).to.equal(0);
    expect(json(created)).to.deep.include({ domain: 'npmrc', kind: 'block', path: NPMRC });
    expect(await buildAndTest(dir)).to.match(/\b5 passing\b/);

    const link = await fleet(['plugins', 'link', dir, '--no-install'], { cwd: tmp.path });
    expect(link.exitCode, link.stderr).to.equal(0);
    await lab.up(1); // its controller starts with the same oclif directories: it loads the plugin

    // `fleet lab up` (like `fleet init`) wrote the domain's example into the lab's repository:
    // node-01 lists npmrc, its host file the variable, domains/npmrc/npmrc the canonical. The
    // node's owner serves it (node policy, contract §5.1); the user has a ~/.npmrc of their own.
    const manifest = await readFile(join(lab.repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.match(/\n {4}domains: \[[^\]]*\bnpmrc\b/);
    await lab.writeNode('node-01', NPMRC, USER_TEXT);
    const policyFile = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(policyFile, 'utf8'), policyFile);
    await writeNodePolicy(
      lab.home('node-01'),
      { ...policy, domains: { ...policy.domains, npmrc: {} } },
      { force: true },
    );
    await writeFile(join(lab.repo, 'domains', 'npmrc', 'npmrc'), CANONICAL);
    lab.git('add', '--all');
    lab.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '-m',
      'npmrc',
    );

    const install = await lab.run(['config', 'install', 'node-01', 'npmrc', '--confirm', '--json']);
    expect(install.exitCode, install.stdout + install.stderr).to.equal(0);
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
