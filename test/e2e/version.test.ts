/**
 * `fleet version` through the real binary on a lab fleet (contract §11, issue 6 item 1): the runtime
 * against canonicalVersion (a development build in a checkout), the probed tools' versions, a
 * probed tool that is missing (exit 1), PATH shadowing seen by the controllers (a dead `fleet`
 * before a runnable one on the login PATH each node's user gets: a real login shell reading a
 * profile in the node's home that prepends both — not the PATH the controllers were started
 * with), and the dated report forms.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { parseNodePolicy, versionReportSchema, type VersionReport } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { destroyLab, fleet, json, tempDir } from '../src/fleet.js';

describe('fleet version on a lab', function () {
  this.timeout(120_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let dir: string;
  let env: Record<string, string>;

  before(async () => {
    tmp = await tempDir('fleet-version-');
    dir = join(tmp.path, 'lab');
    // The nodes' login PATH (their profiles, below): a dead fleet first, a runnable one after it.
    const dead = join(tmp.path, 'path-dead');
    const live = join(tmp.path, 'path-live');
    await mkdir(dead);
    await mkdir(live);
    await writeFile(join(dead, 'fleet'), '#!/bin/sh\necho "@fleet/cli/9.0.0"\n', { mode: 0o644 });
    await chmod(join(dead, 'fleet'), 0o644);
    await writeFile(join(live, 'fleet'), '#!/bin/sh\necho "@fleet/cli/9.0.0 linux-x64"\n', {
      mode: 0o755,
    });
    await chmod(join(live, 'fleet'), 0o755);
    const up = await fleet(['lab', 'up', '--hosts', '2', '--dir', dir, '--json']);
    expect(up.exitCode, up.stderr).to.equal(0);
    const repo = join(dir, 'repo');
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.contain('probes: { tools: [node, git] }');
    await writeFile(
      join(repo, 'fleet.yaml'),
      manifest.replaceAll(
        'probes: { tools: [node, git] }',
        'probes: { tools: [node, git, no-such-tool-xyz] }',
      ),
    );
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    git('commit', '-q', '-am', 'probe a tool no host has');
    // Each node's own policy must list a tool before fleet version may run it (contract §5.1).
    for (const host of ['node-01', 'node-02']) {
      const home = join(dir, 'nodes', host, 'home');
      const file = join(home, '.config', 'fleet', 'node-policy.yaml');
      const { policy } = parseNodePolicy(await readFile(file, 'utf8'), file);
      // Read by the login shell (bash, sh or zsh) the controller learns its user's PATH from.
      const profile = `PATH="${[dead, live].join(delimiter)}${delimiter}$PATH"; export PATH\n`;
      for (const name of ['.bash_profile', '.profile', '.zprofile']) {
        await writeFile(join(home, name), profile);
      }
      await writeNodePolicy(
        home,
        { ...policy, versions: { tools: [...policy.versions.tools, 'no-such-tool-xyz'] } },
        { force: true },
      );
    }
    env = {
      FLEET_REPO: repo,
      FLEET_CREDENTIALS: join(dir, 'credentials.json'),
      XDG_STATE_HOME: join(tmp.path, 'operator-state'),
    };
  });
  after(async () => {
    if (dir) await destroyLab(dir);
    await tmp?.cleanup();
  });

  it('reports node and git versions, the missing tool and the shadowing fleet, exit 1', async () => {
    const run = await fleet(['version', '--json'], { env });
    expect(run.exitCode, run.stderr).to.equal(1);
    const report: VersionReport = versionReportSchema.parse(json(run));
    expect(report.schema).to.equal('fleet.version/v1');
    expect(report.summary).to.deep.equal({
      hosts: 2,
      current: 0,
      drifted: 2,
      unreachable: 0,
      denied: 0,
      errors: 0,
    });
    for (const host of report.hosts) {
      expect(host.status, host.host).to.equal('drifted');
      expect(host.runtime).to.include({ version: '0.1.0', development: true });
      expect(host.runtime?.build).to.deep.equal({ sha256: null, commit: null });
      expect(host.runtime?.loginPath?.source, host.runtime?.loginPath?.detail).to.equal(
        'login-shell',
      );
      expect(host.runtime?.loginPath?.directories.slice(0, 2)).to.deep.equal([
        join(tmp.path, 'path-dead'),
        join(tmp.path, 'path-live'),
      ]);
      const item = (kind: string, name: string) =>
        host.items.find((i) => i.kind === kind && i.name === name);
      expect(item('runtime', '@fleet/controller')).to.include({
        state: 'current',
        expected: '0.1.0',
      });
      expect(item('tool', 'node')?.state).to.equal('current');
      expect(item('tool', 'node')?.version).to.match(/^v\d+\.\d+\.\d+/);
      expect(item('tool', 'git')?.state).to.equal('current');
      expect(item('tool', 'git')?.version).to.match(/^git version \d+\.\d+/);
      expect(item('tool', 'no-such-tool-xyz')).to.include({ state: 'missing', layer: 'version' });
      const shadowing = host.items.filter((i) => i.kind === 'shadowing' && i.state !== 'current');
      expect(shadowing.map((i) => i.path)).to.deep.equal([join(tmp.path, 'path-dead', 'fleet')]);
      expect(shadowing[0]?.detail).to.contain(join(tmp.path, 'path-live', 'fleet'));
    }
  });

  it('writes version.json, .md and .html with --report-dir, never over an earlier report', async () => {
    const out = join(tmp.path, 'reports');
    const first = await fleet(['version', '--report-dir', out], { env });
    expect(first.exitCode, first.stderr).to.equal(1);
    expect(first.stdout).to.contain('no-such-tool-xyz');
    const second = await fleet(['version', '--host', 'node-01', '--report-dir', out, '--json'], {
      env,
    });
    expect(second.exitCode, second.stderr).to.equal(1);
    expect((await readdir(out)).sort()).to.deep.equal([
      'version-2.html',
      'version-2.json',
      'version-2.md',
      'version.html',
      'version.json',
      'version.md',
    ]);
    const written = versionReportSchema.parse(
      JSON.parse(await readFile(join(out, 'version-2.json'), 'utf8')),
    );
    expect(written.hosts.map((h) => h.host)).to.deep.equal(['node-01']);
    expect(await readFile(join(out, 'version.md'), 'utf8')).to.contain('missing');
    expect(await readFile(join(out, 'version.html'), 'utf8')).to.contain('<table>');
  });

  it('refuses an unknown host with exit 2 and asks no host', async () => {
    const run = await fleet(['version', '--host', 'nope', '--json'], { env });
    expect(run.exitCode).to.equal(2);
    expect(json<{ error: { code: string } }>(run).error.code).to.equal('UNKNOWN_HOST');
  });
});
