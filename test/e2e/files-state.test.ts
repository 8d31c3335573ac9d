/**
 * What a file holds besides its text, end to end on a lab node with real git and a real
 * controller (issue 38; contract §8.2, §10.1, §10.4): the default mode of a files entry without
 * `mode` (chezmoi `private_`, Ansible `copy` under umask 022), a rotated secret shown as `stale`
 * until the install converges it — by name, never by value —, a hand fix in the router's installed
 * volume refused like a hand change in a file, a file without its block read as "missing block",
 * and the files domain's paths and backups in `config inventory` and `config export`.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { writeNodePolicy } from '@fleet/controller';
import { join } from 'node:path';
import {
  driftReportSchema,
  parseNodePolicy,
  type DriftReport,
  type ExportResponse,
  type InventoryResponse,
} from '@fleet/core';
import { json } from '../src/fleet.js';
import { Lab, ROUTER } from './lab-fixture.js';

const MANIFEST = 'domains/files/files.yaml';
const TOKEN_FILE = '~/.config/fleet-demo/token.conf';
const PLAIN_FILE = '~/.config/fleet-demo/plain.conf';
const GITCONFIG = '~/.gitconfig';
const VOLUME = '~/.local/share/router/volume/router.yaml';
const ENV = '~/.config/fleet/env';
const LINKED_DIR = '~/.config/fleet-demo/nvim';

describe('e2e: modes, rotated secrets, derived layers and inventory of the files domain', function () {
  this.timeout(300_000);
  let lab: Lab;
  const oldValue = `old-${randomBytes(12).toString('hex')}`;
  const newValue = `new-${randomBytes(12).toString('hex')}`;

  before(async () => {
    lab = await Lab.create('fleet-e2e-files-state-');
    await lab.up(1);
  });
  after(async () => {
    await lab?.destroy();
  });

  const write = async (path: string, text: string): Promise<void> => {
    const file = join(lab.repo, ...path.split('/'));
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, text);
  };
  const commit = (message: string): void => {
    lab.git('add', '--all');
    lab.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-qm',
      message,
    );
  };
  const drift = async (domain: string): Promise<DriftReport> => {
    const run = await lab.run(['drift', '--host', 'node-01', '--domain', domain, '--json']);
    expect([0, 1], run.stdout + run.stderr).to.include(run.exitCode);
    return driftReportSchema.parse(json(run));
  };
  const itemOf = (report: DriftReport, path: string, layer = 'file') =>
    report.hosts[0]?.items.find((item) => item.path === path && item.layer === layer);
  const install = (domain: string, ...extra: string[]) =>
    lab.run(['config', 'install', 'node-01', domain, '--confirm', '--json', ...extra]);
  const modeOf = async (path: string): Promise<string> =>
    ((await stat(lab.nodePath('node-01', path))).mode & 0o7777).toString(8).padStart(4, '0');

  it('chezmoi private_ / Ansible copy without mode: a new file is 0644, one that renders a secret 0600', async () => {
    await lab.writeNode('node-01', ENV, `API_TOKEN=${oldValue}\n`);
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await write(
      MANIFEST,
      `${manifest}  - path: ${TOKEN_FILE}\n    source: token.conf\n  - path: ${PLAIN_FILE}\n    source: plain.conf\n`,
    );
    await write('domains/files/token.conf', 'token = {{ secret.API_TOKEN }}\n');
    await write('domains/files/plain.conf', 'colour = auto\n');
    commit('files: a token file and a plain one, no mode');
    const run = await install('files');
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect(await modeOf(TOKEN_FILE)).to.equal('0600');
    expect(await modeOf(PLAIN_FILE)).to.equal('0644');
    expect(itemOf(await drift('files'), TOKEN_FILE)?.state).to.equal('current');
  });

  it('a rotated secret shows: drift and plan say "secret API_TOKEN rotated" (stale), install converges it', async () => {
    await lab.writeNode('node-01', ENV, `API_TOKEN=${newValue}\n`);
    const driftRun = await lab.run(['drift', '--host', 'node-01', '--domain', 'files', '--json']);
    const item = itemOf(driftReportSchema.parse(json(driftRun)), TOKEN_FILE);
    expect(item?.state).to.equal('stale');
    expect(item?.rotatedSecrets).to.deep.equal(['API_TOKEN']);
    expect(item?.detail).to.contain('secret API_TOKEN rotated');
    const plan = await lab.run(['config', 'plan', 'node-01', 'files']);
    expect(plan.stdout).to.contain('secret API_TOKEN rotated');
    expect(plan.stdout).to.contain('an install would change this host');
    // Names only: neither value travels in drift or plan.
    for (const output of [driftRun.stdout + driftRun.stderr, plan.stdout + plan.stderr]) {
      expect(output).to.not.contain(oldValue).and.not.contain(newValue);
    }
    const run = await install('files');
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', TOKEN_FILE)).toString('utf8')).to.equal(
      `token = ${newValue}\n`,
    );
    expect(itemOf(await drift('files'), TOKEN_FILE)?.state).to.equal('current');
  });

  it('a secret-bearing file widened by hand is a hand change: modified, refused without --force', async () => {
    await chmod(lab.nodePath('node-01', TOKEN_FILE), 0o644);
    const item = itemOf(await drift('files'), TOKEN_FILE);
    expect(item?.state).to.equal('modified');
    expect(item?.mode).to.deep.equal({ live: '0644', wanted: '0600', written: '0600' });
    expect((await install('files')).exitCode).to.equal(7);
    expect((await install('files', '--force')).exitCode).to.equal(0);
    expect(await modeOf(TOKEN_FILE)).to.equal('0600');
  });

  it('config inventory lists the files domain and its backups; config export reads a backup, redacted', async () => {
    const run = await lab.run(['config', 'inventory', 'node-01', '--json']);
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    const inventory = json<InventoryResponse>(run);
    const files = inventory.files.filter((file) => file.domain === 'files').map((f) => f.path);
    expect(files).to.include.members([TOKEN_FILE, PLAIN_FILE]);
    const backups = inventory.backups.filter((backup) => backup.of === TOKEN_FILE);
    expect(backups.length, JSON.stringify(inventory.backups)).to.be.greaterThan(0);
    for (const backup of backups) {
      const exported = await lab.run(['config', 'export', 'node-01', backup.path, '--json']);
      expect(exported.exitCode, exported.stdout + exported.stderr).to.equal(0);
      const body = json<ExportResponse>(exported);
      expect(body).to.deep.include({ kind: 'backup', domain: 'files', exists: true });
      expect(body.exists && body.content).to.equal('token = {{ secret.API_TOKEN }}\n');
      expect(exported.stdout).to.not.contain(oldValue).and.not.contain(newValue);
    }
  });

  it('blockinfile: a file that exists without its block reads "missing block", not "missing file"', async () => {
    await lab.writeNode('node-01', GITCONFIG, '[core]\n\teditor = vim\n');
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await write(
      MANIFEST,
      `${manifest}  - path: ${GITCONFIG}\n    source: gitconfig\n    kind: block\n    marker: '# {mark} fleet'\n`,
    );
    await write('domains/files/gitconfig', '[pull]\n\trebase = true\n');
    commit('files: a block of ~/.gitconfig');
    const run = await lab.run(['drift', '--host', 'node-01', '--domain', 'files']);
    expect(run.stdout).to.match(/missing\s+block\s+~\/\.gitconfig/);
    await rm(lab.nodePath('node-01', GITCONFIG));
    const gone = await lab.run(['drift', '--host', 'node-01', '--domain', 'files']);
    expect(gone.stdout).to.match(/missing\s+file\s+~\/\.gitconfig/);
  });

  it('a dotfiles checkout with a symlinked parent directory is managed at the link target (symlinkInto)', async () => {
    const policyFile = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(policyFile, 'utf8'), policyFile);
    await writeNodePolicy(
      lab.home('node-01'),
      { ...policy, symlinkInto: ['~/dotfiles'] },
      { force: true },
    );
    await mkdir(lab.nodePath('node-01', '~/dotfiles/nvim'), { recursive: true });
    await symlink('../../dotfiles/nvim', lab.nodePath('node-01', LINKED_DIR));
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await write(MANIFEST, `${manifest}  - path: ${LINKED_DIR}/init.lua\n    source: init.lua\n`);
    await write('domains/files/init.lua', 'vim.o.number = true\n');
    commit('files: init.lua under a linked directory');
    const run = await install('files');
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect(await readFile(lab.nodePath('node-01', '~/dotfiles/nvim/init.lua'), 'utf8')).to.equal(
      'vim.o.number = true\n',
    );
    expect((await lstat(lab.nodePath('node-01', LINKED_DIR))).isSymbolicLink()).to.equal(true);
    expect(itemOf(await drift('files'), `${LINKED_DIR}/init.lua`)?.state).to.equal('current');
  });

  it("a hand fix in the router's installed volume is a hand change: drift and plan say modified, install refuses without --force", async () => {
    const first = await install('router');
    expect(first.exitCode, first.stdout + first.stderr).to.equal(0);
    expect(itemOf(await drift('router'), VOLUME, 'derived')?.state).to.equal('current');
    const config = (await lab.readNode('node-01', ROUTER)).toString('utf8');
    const fixed = `${config}# hot fix on the host\n`;
    await lab.writeNode('node-01', VOLUME, fixed);
    const item = itemOf(await drift('router'), VOLUME, 'derived');
    expect(item?.state).to.equal('modified');
    expect(item?.detail).to.contain('equals neither the config file nor any version fleet wrote');
    const plan = await lab.run(['config', 'plan', 'node-01', 'router']);
    expect(plan.stdout).to.match(
      /modified\s+~\/\.local\/share\/router\/volume\/router\.yaml {2}\(derived\)/,
    );
    expect(plan.stdout).to.contain('an install would change this host');
    const refused = await install('router');
    expect(refused.exitCode, refused.stdout + refused.stderr).to.equal(7);
    expect(json<{ error: { code: string } }>(refused).error.code).to.equal('MODIFIED');
    expect((await lab.readNode('node-01', VOLUME)).toString('utf8')).to.equal(fixed);
    const forced = await install('router', '--force');
    expect(forced.exitCode, forced.stdout + forced.stderr).to.equal(0);
    expect((await lab.readNode('node-01', VOLUME)).toString('utf8')).to.equal(config);
    expect(itemOf(await drift('router'), VOLUME, 'derived')?.state).to.equal('current');
  });
});
