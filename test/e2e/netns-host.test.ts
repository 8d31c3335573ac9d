/**
 * The harness for hosts that are not loopback (test/src/netns-host.ts): two hosts, each a network
 * namespace of its own with a real sshd and a real `systemd --user` manager inside. From the root
 * namespace the operator logs in over SSH with a pinned host key; each manager runs; a server
 * started by a host's manager is reachable at that host's address only, and one host cannot
 * reach the other.
 */
import { request } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { tempDir, waitFor } from '../src/fleet.js';
import { startNetnsHosts, type NetnsHost } from '../src/netns-host.js';
import { generateKey, run } from '../src/sshd.js';

const HTTP_PORT = 8080;
const PROBE_UNIT = 'fleet-netns-probe.service';

/** GET http://address:port/ from the root namespace: the body, or the error's code. */
function get(address: string, port: number): Promise<{ body?: string; code?: string }> {
  return new Promise((resolve) => {
    const req = request({ host: address, port, path: '/', timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ body }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code ?? 'ERROR' }));
    req.end();
  });
}

describe('hosts in network namespaces (sshd and systemd --user inside)', function () {
  this.timeout(60_000);
  let dir: { path: string; cleanup: () => Promise<void> } | undefined;
  let key: { privateKey: string; publicKey: string };
  let hosts: NetnsHost[] = [];
  let alpha: NetnsHost;
  let beta: NetnsHost;

  before(async function () {
    dir = await tempDir('fleet-netns-test-');
    key = await generateKey(join(dir.path, 'operator_ed25519'));
    const started = Date.now();
    hosts = await startNetnsHosts(this, [{ name: 'alpha' }, { name: 'beta' }], {
      authorizedKey: key.publicKey,
    });
    process.stderr.write(`      (two hosts started in ${Date.now() - started} ms)\n`);
    [alpha, beta] = hosts as [NetnsHost, NetnsHost];
  });
  after(async () => {
    for (const host of hosts) await host.stop();
    await dir?.cleanup();
  });

  it('gives each host its own namespace, subnet, user and pinned host key', () => {
    expect(alpha.address).to.match(/^10\.231\.\d+\.2$/);
    expect(beta.address).to.match(/^10\.231\.\d+\.2$/);
    expect(alpha.address).to.not.equal(beta.address);
    expect(alpha.namespace).to.match(/^fleet-[0-9a-f]+-alpha$/);
    expect(alpha.namespace).to.not.equal(beta.namespace);
    expect(alpha.user).to.not.equal(beta.user);
    expect(alpha.uid).to.not.equal(0);
    expect(alpha.hostKey).to.match(/^ssh-ed25519 AAAA\S+$/);
    expect(alpha.hostKey).to.not.equal(beta.hostKey);
  });

  it('lets the operator log in over SSH from the root namespace, host key pinned', async () => {
    for (const host of hosts) {
      const knownHosts = join(dir!.path, `known_hosts-${host.name}`);
      await writeFile(knownHosts, `${host.knownHostsLine}\n`, { mode: 0o600 });
      const ssh = await run('ssh', [
        '-F',
        'none',
        '-i',
        key.privateKey,
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        `UserKnownHostsFile=${knownHosts}`,
        '-o',
        'ConnectTimeout=5',
        '-p',
        String(host.sshPort),
        `${host.user}@${host.address}`,
        'id -un; echo "$XDG_RUNTIME_DIR"; systemctl --user is-system-running; command -v node',
      ]);
      expect(ssh.exitCode, ssh.stderr).to.equal(0);
      const [user, runtimeDir, state, node] = ssh.stdout.trim().split('\n');
      expect(user).to.equal(host.user);
      expect(runtimeDir).to.equal(host.runtimeDir);
      expect(state).to.match(/^(running|degraded)$/);
      expect(node, 'the PATH of a session finds the node the user can run').to.equal(host.nodePath);
      // The other host's key is refused: the pin is what lets the login through.
      const other = host === alpha ? beta : alpha;
      await writeFile(knownHosts, `${host.address} ${other.hostKey}\n`, { mode: 0o600 });
      const refused = await run('ssh', [
        '-F',
        'none',
        '-i',
        key.privateKey,
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        `UserKnownHostsFile=${knownHosts}`,
        `${host.user}@${host.address}`,
        'true',
      ]);
      expect(refused.exitCode).to.equal(255);
      expect(refused.stderr).to.match(
        /HOST IDENTIFICATION HAS CHANGED|Host key verification failed/,
      );
    }
  });

  it('runs a systemd --user manager for each host user, inside its namespace', async () => {
    for (const host of hosts) {
      const state = await host.systemctl('is-system-running');
      expect(state.stdout.trim(), state.stderr).to.match(/^(running|degraded)$/);
      const links = await host.run(['cat', '/proc/net/dev']);
      expect(links.stdout).to.contain('eth0:');
      expect(links.stdout).to.not.match(/^\s*fleet\d+:/m);
    }
  });

  it("serves a unit's TCP port at its host's address only; hosts cannot reach each other", async () => {
    const script = `require('http').createServer((q, s) => s.end(process.env.USER)).listen(${HTTP_PORT}, process.argv[1])`;
    const started = await alpha.run([
      'systemd-run',
      '--user',
      '--unit',
      PROBE_UNIT,
      '--collect',
      '--quiet',
      '--',
      alpha.nodePath,
      '-e',
      script,
      alpha.address,
    ]);
    expect(started.exitCode, started.stderr).to.equal(0);
    try {
      await waitFor(
        async () => (await get(alpha.address, HTTP_PORT)).body === alpha.user,
        10_000,
        `the unit's server at ${alpha.address}:${HTTP_PORT}`,
      );
      const other = await get(beta.address, HTTP_PORT);
      expect(other.code).to.equal('ECONNREFUSED');
      // From inside beta there is no route to alpha at all.
      const probe = await beta.run([
        beta.nodePath,
        '-e',
        `require('net').connect(${HTTP_PORT}, process.argv[1]).on('connect', () => process.exit(0)).on('error', (e) => { console.log(e.code); process.exit(3); })`,
        alpha.address,
      ]);
      expect(probe.exitCode).to.equal(3);
      expect(probe.stdout.trim()).to.match(/^(ENETUNREACH|EHOSTUNREACH)$/);
    } finally {
      await alpha.systemctl('stop', PROBE_UNIT);
    }
  });
});
