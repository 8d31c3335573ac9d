/**
 * The files domain's sources as git holds them, end to end on a lab fleet with real git, the real
 * binary and a real controller (issue 38): a source that is a symbolic link installs its target's
 * text (chezmoi `testdata/scripts/issue1161.txtar`), an executable source installs executable, a
 * source under a linked directory installs the file the link leads to, a link out of the
 * repository is refused by validate and is an `error` in drift with nothing written, a Latin-1 or
 * binary source installs byte for byte and compares by bytes (never U+FFFD on disk), overlapping entries are refused before
 * anything is written (chezmoi `edgecases.txtar`, "inconsistent state"), and an entry with
 * `template: false` — or a template with `{{ "{{" }}` — writes its braces as they are (Ansible
 * `copy` against `template`).
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyDocumentSchema, driftReportSchema, type DriftReport } from '@fleet/core';
import { json } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

const MANIFEST = 'domains/files/files.yaml';
const DIR = '~/.config/fleet-demo';

describe('e2e: files sources are what git holds (links, modes, bytes, braces)', function () {
  this.timeout(240_000);
  let lab: Lab;
  let manifest: string;

  before(async () => {
    lab = await Lab.create('fleet-e2e-files-sources-');
    await lab.up(1);
    manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
  });
  after(async () => {
    await lab?.destroy();
  });

  const repoFile = (path: string): string => join(lab.repo, ...path.split('/'));
  const write = async (path: string, content: string | Buffer): Promise<void> => {
    await mkdir(join(repoFile(path), '..'), { recursive: true });
    await writeFile(repoFile(path), content);
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
  /** files.yaml with these entries after the lab's example one. */
  const entries = (...lines: string[]) => write(MANIFEST, `${manifest}${lines.join('\n')}\n`);
  const drift = async (): Promise<DriftReport> => {
    const run = await lab.run(['drift', '--host', 'node-01', '--domain', 'files', '--json']);
    expect([0, 1], run.stdout + run.stderr).to.include(run.exitCode);
    return driftReportSchema.parse(json(run));
  };
  const itemOf = (report: DriftReport, path: string) =>
    report.hosts[0]?.items.find((item) => item.path === path);
  const install = () => lab.run(['config', 'install', 'node-01', 'files', '--confirm', '--json']);
  const exists = (path: string) =>
    stat(lab.nodePath('node-01', path)).then(
      () => true,
      () => false,
    );

  it('a source that is a symbolic link installs its target; an executable source installs 0755', async () => {
    await write('dotfiles/c06-target', 'c06 = the target, not its name\n');
    await symlink('../../dotfiles/c06-target', repoFile('domains/files/c06'));
    await write('domains/files/tool.sh', '#!/bin/sh\necho tool\n');
    await chmod(repoFile('domains/files/tool.sh'), 0o755);
    await entries(
      `  - path: ${DIR}/c06.conf`,
      '    source: c06',
      `  - path: ${DIR}/tool.sh`,
      '    source: tool.sh',
    );
    commit('files: a linked source and an executable one');
    const validate = await lab.run(['validate', '--json']);
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/c06.conf`)).toString('utf8')).to.equal(
      'c06 = the target, not its name\n',
    );
    const mode = (await stat(lab.nodePath('node-01', `${DIR}/tool.sh`))).mode & 0o777;
    expect(mode.toString(8)).to.equal('755');
    const report = await drift();
    expect(itemOf(report, `${DIR}/c06.conf`)?.state).to.equal('current');
    expect(itemOf(report, `${DIR}/tool.sh`)?.state).to.equal('current');
  });

  it('a change of the link target is stale, and install writes the new text', async () => {
    await write('dotfiles/c06-target', 'c06 = the target, version 2\n');
    commit('dotfiles: c06 v2');
    expect(itemOf(await drift(), `${DIR}/c06.conf`)?.state).to.equal('stale');
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/c06.conf`)).toString('utf8')).to.equal(
      'c06 = the target, version 2\n',
    );
  });

  it('a source under a linked directory (config -> dotfiles/config) installs the file the link leads to', async () => {
    await write('dotfiles/config/nvim/init.lua', 'vim.o.number = true\n');
    await symlink('../../dotfiles/config', repoFile('domains/files/config'));
    await entries(
      `  - path: ${DIR}/c06.conf`,
      '    source: c06',
      `  - path: ${DIR}/tool.sh`,
      '    source: tool.sh',
      `  - path: ${DIR}/init.lua`,
      '    source: config/nvim/init.lua',
    );
    commit('files: a source under a linked directory');
    const validate = await lab.run(['validate', '--json']);
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/init.lua`)).toString('utf8')).to.equal(
      'vim.o.number = true\n',
    );
    expect(itemOf(await drift(), `${DIR}/init.lua`)?.state).to.equal('current');
    await write('dotfiles/config/nvim/init.lua', 'vim.o.number = false\n');
    commit('dotfiles: init.lua v2');
    expect(itemOf(await drift(), `${DIR}/init.lua`)?.state).to.equal('stale');
  });

  const adopt = (path: string, ...extra: string[]) =>
    lab.run(['config', 'adopt', 'node-01', path, '--promote', ...extra, '--json']);
  const isLink = async (path: string) => (await lstat(repoFile(path))).isSymbolicLink();

  it('adopt --promote of a linked source writes the file the link leads to; the link stays a link', async () => {
    await writeFile(lab.nodePath('node-01', `${DIR}/c06.conf`), 'c06 = edited on the host\n');
    const run = await adopt(`${DIR}/c06.conf`);
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect(json<{ promoted: { canonical: string } }>(run).promoted.canonical).to.equal(
      'dotfiles/c06-target',
    );
    expect(await isLink('domains/files/c06')).to.equal(true);
    expect(await readFile(repoFile('dotfiles/c06-target'), 'utf8')).to.equal(
      'c06 = edited on the host\n',
    );
    expect(lab.git('status', '--porcelain').trim()).to.equal(''); // committed, link and all
    expect(itemOf(await drift(), `${DIR}/c06.conf`)?.state).to.equal('current');
    // Under a linked directory (config -> ../../dotfiles/config) likewise.
    const under = await adopt(`${DIR}/init.lua`);
    expect(under.exitCode, under.stdout + under.stderr).to.equal(0);
    expect(await isLink('domains/files/config')).to.equal(true);
    expect(await readFile(repoFile('dotfiles/config/nvim/init.lua'), 'utf8')).to.equal(
      'vim.o.number = true\n',
    );
    expect(itemOf(await drift(), `${DIR}/init.lua`)?.state).to.equal('current');
  });

  it('adopt --promote of a source linked out of the repository is refused; nothing is written', async () => {
    const outside = join(lab.repo, '..', 'outside-promote.conf');
    await writeFile(outside, 'outside\n');
    await symlink('../../../outside-promote.conf', repoFile('domains/files/outside-promote'));
    await entries(
      `  - path: ${DIR}/c06.conf`,
      '    source: c06',
      `  - path: ${DIR}/outside-promote.conf`,
      '    source: outside-promote',
    );
    commit('files: a source linked out of the repository');
    const head = lab.git('rev-parse', 'HEAD').trim();
    await writeFile(lab.nodePath('node-01', `${DIR}/outside-promote.conf`), 'from the host\n');
    // --dry-run refuses it the same way: it says what the real run would do.
    const dry = await lab.run([
      'config',
      'adopt',
      'node-01',
      `${DIR}/outside-promote.conf`,
      '--promote',
      '--dry-run',
      '--json',
    ]);
    expect(dry.exitCode, dry.stdout + dry.stderr).to.equal(7);
    expect(json<{ error: { code: string } }>(dry).error.code).to.equal('PROMOTE_REFUSED');
    const run = await adopt(`${DIR}/outside-promote.conf`);
    expect(run.exitCode, run.stdout + run.stderr).to.equal(7);
    const error = json<{ error: { code: string; message: string } }>(run).error;
    expect(error.code).to.equal('PROMOTE_REFUSED');
    expect(error.message).to.contain('outside the repository');
    expect(await readFile(outside, 'utf8')).to.equal('outside\n');
    expect(await isLink('domains/files/outside-promote')).to.equal(true);
    expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(head);
    lab.git('rm', '-q', 'domains/files/outside-promote');
    await entries(`  - path: ${DIR}/c06.conf`, '    source: c06');
    commit('files: without the source linked out of the repository');
  });

  const refusedSources: {
    name: string;
    source: string;
    make: () => Promise<void>;
    says: string;
    /** More lines of the entry (a block entry's kind and marker). */
    more?: string[];
  }[] = [
    {
      name: 'a link out of the repository',
      source: 'outside',
      make: () => symlink('../../../../etc/hostname', repoFile('domains/files/outside')),
      says: 'outside the repository',
    },
    {
      name: 'a source under a linked directory out of the repository',
      source: 'etc-dir/hostname',
      make: () => symlink('../../../../etc', repoFile('domains/files/etc-dir')),
      says: 'outside the repository',
    },
    {
      // A block's body is spliced as text: drift shows the same error (contract §10.4).
      name: "a block entry's Latin-1 source",
      source: 'profile-latin1',
      make: () => write('domains/files/profile-latin1', Buffer.from('NAME=caf\xe9\n', 'latin1')),
      says: "not valid UTF-8 (the first invalid byte is at offset 8): a block entry's source is its text body",
      more: ['    kind: block', "    marker: '# {mark} fleet'"],
    },
  ];
  for (const { name, source, make, says, more = [] } of refusedSources) {
    it(`${name}: validate refuses it with its path, drift says error, nothing is written`, async () => {
      await make();
      const path = `${DIR}/${source}`;
      await entries(`  - path: ${path}`, `    source: ${source}`, ...more);
      try {
        const validate = await lab.run(['validate', '--json']);
        expect(validate.exitCode).to.equal(2);
        expect(json<{ error: { code: string } }>(validate).error.code).to.equal('REPO_INVALID');
        expect(validate.stdout).to.contain(`domains/files/${source}`).and.contain(says);
        commit(`files: ${name}`);
        const item = itemOf(await drift(), path);
        expect(item?.state).to.equal('error');
        expect(item?.detail).to.contain(says);
        const run = await lab.run([
          'config',
          'install',
          'node-01',
          'files',
          '--file',
          path,
          '--confirm',
          '--json',
        ]);
        expect(run.exitCode).to.not.equal(0);
        expect(await exists(path)).to.equal(false);
      } finally {
        await entries(
          `  - path: ${DIR}/c06.conf`,
          '    source: c06',
          `  - path: ${DIR}/tool.sh`,
          '    source: tool.sh',
        );
        commit(`files: without ${name}`);
      }
    });
  }

  it('a Latin-1 source and a binary one install byte for byte, as Ansible copy writes them; again is a no-op', async () => {
    const latin1 = Buffer.from('caf\xe9\n', 'latin1');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
    await write('domains/files/latin1.conf', latin1);
    await write('domains/files/logo.png', png);
    await entries(
      `  - path: ${DIR}/c06.conf`,
      '    source: c06',
      `  - path: ${DIR}/tool.sh`,
      '    source: tool.sh',
      `  - path: ${DIR}/latin1.conf`,
      '    source: latin1.conf',
      `  - path: ${DIR}/logo.png`,
      '    source: logo.png',
    );
    commit('files: a Latin-1 source and a binary one');
    const validate = await lab.run(['validate', '--json']);
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
    const plan = await lab.run(['config', 'plan', 'node-01', 'files', '--json']);
    expect(plan.stdout).to.contain(`binary, ${png.length} bytes, sha256`);
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/latin1.conf`)).equals(latin1)).to.equal(true);
    expect((await lab.readNode('node-01', `${DIR}/logo.png`)).equals(png)).to.equal(true);
    const report = await drift();
    expect(itemOf(report, `${DIR}/latin1.conf`)?.state).to.equal('current');
    expect(itemOf(report, `${DIR}/logo.png`)?.state).to.equal('current');
    // apply's desiredSha256 names the bytes on disk, as sha256sum reads them — not the base64.
    const apply = await lab.run(['apply', '--host', 'node-01', '--domain', 'files', '--json']);
    expect(apply.exitCode, apply.stdout + apply.stderr).to.equal(2); // a plan: no --confirm
    const planned = applyDocumentSchema.parse(json(apply)).hosts[0]?.domains[0]?.files ?? [];
    for (const name of ['latin1.conf', 'logo.png']) {
      const live = execFileSync('sha256sum', [lab.nodePath('node-01', `${DIR}/${name}`)], {
        encoding: 'utf8',
      }).split(' ')[0];
      expect(planned.find((file) => file.path === `${DIR}/${name}`)?.desiredSha256).to.equal(live);
    }
    // Defect 3: a binary entry never makes a later whole-domain install refuse.
    const again = await install();
    expect(again.exitCode, again.stdout + again.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/logo.png`)).equals(png)).to.equal(true);
  });

  it('a new binary version is stale and installs; a hand change to the bytes is refused without --force', async () => {
    const v2 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0e]);
    await write('domains/files/logo.png', v2);
    commit('files: logo v2');
    expect(itemOf(await drift(), `${DIR}/logo.png`)?.state).to.equal('stale');
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/logo.png`)).equals(v2)).to.equal(true);
    await writeFile(lab.nodePath('node-01', `${DIR}/logo.png`), Buffer.from([0, 1, 2, 3]));
    const item = itemOf(await drift(), `${DIR}/logo.png`);
    expect(item?.state).to.equal('modified');
    expect(item?.diff).to.contain('binary, 4 bytes, sha256');
    const refused = await install();
    expect(refused.exitCode, refused.stdout + refused.stderr).to.equal(7);
    expect(Buffer.from(await lab.readNode('node-01', `${DIR}/logo.png`))).to.deep.equal(
      Buffer.from([0, 1, 2, 3]),
    );
    const forced = await lab.run([
      'config',
      'install',
      'node-01',
      'files',
      '--confirm',
      '--force',
      '--json',
    ]);
    expect(forced.exitCode, forced.stdout + forced.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/logo.png`)).equals(v2)).to.equal(true);
  });

  it('a parent and its child entry (…/a and …/a/b): validate refuses it, nothing is written', async () => {
    await write('domains/files/a', 'a\n');
    await entries(`  - path: ${DIR}/a`, '    source: a', `  - path: ${DIR}/a/b`, '    source: a');
    try {
      const validate = await lab.run(['validate', '--json']);
      expect(validate.exitCode).to.equal(2);
      expect(json<{ error: { code: string } }>(validate).error.code).to.equal('REPO_INVALID');
      expect(validate.stdout).to.contain(`${DIR}/a/b is inside entry`);
      commit('files: overlapping entries');
      const run = await install();
      expect(run.exitCode).to.equal(2);
      expect(run.stdout + run.stderr).to.contain('FILES_MANIFEST_INVALID');
      expect(await exists(`${DIR}/a`)).to.equal(false);
    } finally {
      await write(MANIFEST, manifest);
      commit('files: back to the example entry');
    }
  });

  it('template: false copies braces as they are; a template writes {{ "{{" }} as {{', async () => {
    const tmux = 'set -g status-left "{{ session }}"\n# {{ secret.NOT_A_SECRET }} stays text\n';
    await write('domains/files/tmux.conf', tmux);
    await write('domains/files/mustache.conf', 'hello {{ "{{" }} name }}\n');
    await entries(
      `  - path: ${DIR}/tmux.conf`,
      '    source: tmux.conf',
      '    template: false',
      `  - path: ${DIR}/mustache.conf`,
      '    source: mustache.conf',
    );
    commit('files: braces as text');
    const validate = await lab.run(['validate', '--json']);
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', `${DIR}/tmux.conf`)).toString('utf8')).to.equal(tmux);
    expect((await lab.readNode('node-01', `${DIR}/mustache.conf`)).toString('utf8')).to.equal(
      'hello {{ name }}\n',
    );
    const report = await drift();
    expect(itemOf(report, `${DIR}/tmux.conf`)?.state).to.equal('current');
    expect(itemOf(report, `${DIR}/mustache.conf`)?.state).to.equal('current');
  });

  it('adopt --promote of a file holding {{ … }} writes a source that renders back: drift is current', async () => {
    const mustache = 'hello {{ name }} and {{#each items}}\n';
    await writeFile(lab.nodePath('node-01', `${DIR}/mustache.conf`), mustache);
    const tmux = 'set -g status-right "{{ host }}"\n';
    await writeFile(lab.nodePath('node-01', `${DIR}/tmux.conf`), tmux);
    for (const name of ['mustache.conf', 'tmux.conf']) {
      const run = await adopt(`${DIR}/${name}`);
      expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    }
    // A template escapes each literal {{; an entry with template: false is copied as it is.
    expect(await readFile(repoFile('domains/files/mustache.conf'), 'utf8')).to.equal(
      'hello {{ "{{" }} name }} and {{ "{{" }}#each items}}\n',
    );
    expect(await readFile(repoFile('domains/files/tmux.conf'), 'utf8')).to.equal(tmux);
    const report = await drift();
    expect(itemOf(report, `${DIR}/mustache.conf`)?.state).to.equal('current');
    expect(itemOf(report, `${DIR}/tmux.conf`)?.state).to.equal('current');
  });

  it("adopt of a template: false file holding a secret's value is refused: never a literal placeholder, never the value in git", async () => {
    const value = randomBytes(24).toString('hex');
    await lab.writeNode('node-01', '~/.config/fleet/env', `TMUX_TOKEN=${value}\n`);
    await writeFile(
      lab.nodePath('node-01', `${DIR}/tmux.conf`),
      `set -g @token "${value}"\nset -g status-right "{{ host }}"\n`,
    );
    const head = lab.git('rev-parse', 'HEAD').trim();
    const source = await readFile(repoFile('domains/files/tmux.conf'), 'utf8');
    for (const extra of [['--dry-run'], []]) {
      const run = await adopt(`${DIR}/tmux.conf`, ...extra);
      expect(run.exitCode, `${extra.join(' ')} ${run.stdout}${run.stderr}`).to.equal(7);
      const { error } = json<{ error: { code: string; message: string } }>(run);
      expect(error.code).to.equal('SECRET_FOUND');
      expect(error.message).to.contain('TMUX_TOKEN').and.contain('template: false');
      expect(error.message.split('\n')).to.have.length(1);
      expect(run.stdout + run.stderr).to.not.contain(value);
    }
    expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(head);
    expect(lab.git('status', '--porcelain').trim()).to.equal('');
    expect(await readFile(repoFile('domains/files/tmux.conf'), 'utf8')).to.equal(source);
    expect(lab.git('log', '--all', '-p')).to.not.contain(value);
  });

  it('adopt --dry-run refuses a mirror path with a link on its way, as the real adopt does; nothing is written', async () => {
    const outside = join(lab.repo, '..', 'outside-mirror.conf');
    await writeFile(outside, 'outside\n');
    await write('domains/files/linkway.conf', 'linkway = 1\n');
    await entries(`  - path: ${DIR}/linkway.conf`, '    source: linkway.conf');
    const mirror = 'mirror/node-01/files/.config/fleet-demo/linkway.conf';
    await mkdir(join(repoFile(mirror), '..'), { recursive: true });
    await symlink('../../../../../../outside-mirror.conf', repoFile(mirror));
    commit('files: linkway, its mirror path a link out of the repository');
    const installed = await install();
    expect(installed.exitCode, installed.stdout + installed.stderr).to.equal(0);
    await writeFile(lab.nodePath('node-01', `${DIR}/linkway.conf`), 'linkway = 2\n');
    const head = lab.git('rev-parse', 'HEAD').trim();
    for (const extra of [['--dry-run'], []]) {
      const run = await lab.run([
        'config',
        'adopt',
        'node-01',
        `${DIR}/linkway.conf`,
        ...extra,
        '--json',
      ]);
      expect(run.exitCode, `${extra.join(' ')} ${run.stdout}${run.stderr}`).to.equal(7);
      expect(json<{ error: { code: string } }>(run).error.code).to.equal('SYMLINK_REFUSED');
    }
    expect(await readFile(outside, 'utf8')).to.equal('outside\n');
    expect(await isLink(mirror)).to.equal(true);
    expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(head);
  });
});
