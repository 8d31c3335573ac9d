/**
 * `fleet host add` for a Mac (contract §12.1, ADR 0020, ADR 0022): a host that is not loopback —
 * a network namespace with its own address, a real OpenSSH server and its own Unix user
 * (test/src/netns-host.ts) — whose login environment is a Mac's as far as fleet can tell: `uname
 * -s` answers `Darwin`, `launchctl` on the PATH is the testkit's strict fake launchd (its rules
 * cite launchd.plist(5) and launchctl(1)), and every Node process of the login reports
 * `process.platform === 'darwin'` (the testkit's `as-darwin` import). The fake launchd runs its
 * jobs the same way.
 *
 * What runs is the real code: the operator's `fleet host add` (probe, plan, upload, enrollment,
 * acceptance over TLS at the host's address, commit) and, on the host, the real packed runtime's
 * `controller enroll`, runner and controller, which choose the Mac layout
 * (`~/Library/Application Support/fleet/`) and the bootstrap-launchd adapter on their own — the
 * agent written to `~/Library/LaunchAgents/` and loaded with `launchctl bootstrap gui/<uid>`.
 * What it does not prove: macOS itself (its uname, shell, tar, Node and libuv), APFS, the real
 * launchd, a real GUI login (README, "Platforms").
 */
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { expect } from 'chai';
import { AS_DARWIN_NODE_OPTIONS, FAKE_SUPERVISOR_BIN } from '@fleet/testkit';
import { packedRuntimeArtifact, type RuntimeArtifact } from '../src/artifact.js';
import { fleet, json, tempDir } from '../src/fleet.js';
import { startNetnsHosts, type NetnsHost } from '../src/netns-host.js';
import { generateKey } from '../src/sshd.js';

const LABEL = 'dev.fleet.controller';
const AGENT = `Library/LaunchAgents/${LABEL}.plist`;
const MAC_RUNTIME = 'Library/Application Support/fleet/runtime';

/** `SHA256:…` of an OpenSSH public key line, as ssh-keygen -l prints it. */
function fingerprintOf(line: string): string {
  const blob = Buffer.from(line.split(' ')[1] as string, 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * A folder every user can read holding the Mac's `uname`: `-s` answers `Darwin` (the kernel name
 * macOS's uname(1) prints), everything else is the machine's own uname.
 */
function macShims(dir: string): string {
  const real = ['/usr/bin/uname', '/bin/uname'].find((path) => existsSync(path)) ?? 'uname';
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  chmodSync(dir, 0o755);
  writeFileSync(
    join(dir, 'uname'),
    `#!/bin/sh\ncase "$1" in -s) echo Darwin ;; *) exec ${real} "$@" ;; esac\n`,
    { mode: 0o755 },
  );
  return dir;
}

describe('fleet host add on a Mac: a netns host whose login is a Mac under the fake launchd', function () {
  this.timeout(900_000);
  let dir: { path: string; cleanup: () => Promise<void> } | undefined;
  let hosts: NetnsHost[] = [];
  let mac: NetnsHost;
  let key: { privateKey: string; publicKey: string };
  let artifact: RuntimeArtifact;
  let repo: string;
  let env: Record<string, string>;
  let macPath: string;
  const add = (...extra: string[]) =>
    fleet(
      [
        'host',
        'add',
        'mac',
        '--ssh',
        `${mac.user}@${mac.address}`,
        '--identity',
        key.privateKey,
        '--repo',
        repo,
        ...extra,
      ],
      { env },
    );
  /** `launchctl ARGS` on the Mac, as its user would type it. */
  const launchctl = (...args: string[]) =>
    mac.run(['launchctl', ...args], { env: { PATH: macPath } });

  before(async function () {
    dir = await tempDir('fleet-host-add-mac-');
    chmodSync(dir.path, 0o755);
    key = await generateKey(join(dir.path, 'operator_ed25519'));
    // The Mac's login: its uname, launchctl and node first on the PATH, Node processes on darwin.
    macPath = [
      macShims(join(dir.path, 'mac-bin')),
      FAKE_SUPERVISOR_BIN,
      dirname(process.execPath),
      '/usr/bin:/bin:/usr/sbin:/sbin',
    ].join(delimiter);
    hosts = await startNetnsHosts(this, [{ name: 'mac' }], {
      authorizedKey: key.publicKey,
      sessionEnvironment: { PATH: macPath, NODE_OPTIONS: AS_DARWIN_NODE_OPTIONS },
    });
    [mac] = hosts as [NetnsHost];
    // launchd's user domain (the fake's state in the user's home): the same PATH for its jobs,
    // and its jobs run as on a Mac (FakeSupervisorHost.setLaunchdPath / runJobsOnMac do this
    // for a home of the test's own).
    const state = join(mac.home, '.fleet-fake-supervisor');
    mkdirSync(join(state, 'launchd'), { recursive: true });
    writeFileSync(join(state, 'launchd', 'user-path'), `${macPath}\n`);
    writeFileSync(join(state, 'launchd', 'platform'), 'darwin\n');
    for (const path of [state, join(state, 'launchd')]) chownSync(path, mac.uid, mac.gid);
    for (const file of ['user-path', 'platform']) {
      chownSync(join(state, 'launchd', file), mac.uid, mac.gid);
    }
    artifact = await packedRuntimeArtifact();
    env = {
      FLEET_CREDENTIALS: join(dir.path, 'config', 'credentials.json'),
      SSH_AUTH_SOCK: '',
    };
    repo = join(dir.path, 'my-fleet');
    const init = await fleet(['init', repo, '--no-example-host'], { env });
    expect(init.exitCode, init.stderr).to.equal(0);
    const released = await fleet(['release', '--confirm', '--repo', repo, '--json'], { env });
    expect(released.exitCode, released.stderr + released.stdout).to.equal(0);
    expect(json<{ sha256: string }>(released).sha256).to.equal(artifact.sha256);
  });
  after(async () => {
    for (const host of hosts) await host.stop();
    await dir?.cleanup();
  });

  it('plans a Mac: Darwin seen over SSH, the LaunchAgent and launchd in the policy, nothing changed', async () => {
    const planned = await add();
    expect(planned.exitCode, planned.stderr).to.equal(0);
    expect(planned.stdout).to.match(/host {11}Darwin /);
    expect(planned.stdout).to.contain(
      `https://${mac.address}:7701 as the LaunchAgent ${LABEL} (~/Library/LaunchAgents, launchctl bootstrap gui/UID)`,
    );
    expect(planned.stdout).to.match(/supervisors:\n\s+- launchd\n\s+supervisor:\n\s+kind: launchd/);
    expect(planned.stdout).to.contain('to upload');
    expect(planned.stdout).to.contain('run again with --confirm');
    expect(existsSync(join(mac.home, AGENT))).to.equal(false);
  });

  it('enrolls the Mac: the agent bootstrapped into gui/<uid>, the Mac layout, accepted over TLS', async () => {
    const added = await add('--host-key', fingerprintOf(mac.hostKey), '--confirm', '--json');
    expect(added.exitCode, added.stderr).to.equal(0);
    const result = json<{ outcome: string; bytesSent: number; fingerprint: string }>(added);
    expect(result.outcome).to.equal('enrolled');
    expect(result.bytesSent).to.equal(artifact.bytes);
    // The agent in ~/Library/LaunchAgents, loaded in the user's gui domain and running.
    const plist = await readFile(join(mac.home, AGENT), 'utf8');
    expect(plist).to.contain(`<string>${LABEL}</string>`);
    expect(plist).to.contain(`${mac.home}/${MAC_RUNTIME}/generations/${artifact.sha256}/`);
    const printed = await launchctl('print', `gui/${mac.uid}/${LABEL}`);
    expect(printed.exitCode, printed.stderr).to.equal(0);
    expect(printed.stdout).to.match(/^\tstate = running$/m);
    const calls = (
      await readFile(join(mac.home, '.fleet-fake-supervisor/launchd/calls.jsonl'), 'utf8')
    )
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);
    expect(calls).to.deep.include([
      'launchctl',
      'bootstrap',
      `gui/${mac.uid}`,
      join(mac.home, AGENT),
    ]);
    // Nothing under systemd, nothing in the Linux layout.
    const unit = await mac.systemctl('is-active', 'fleet-controller.service');
    expect(unit.stdout.trim()).to.not.equal('active');
    expect(existsSync(join(mac.home, '.local/share/fleet/runtime'))).to.equal(false);
    // fleet.yaml records a Mac under launchd; the operator reaches it over TLS at its address.
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.match(/platform: darwin\n\s+supervisor: launchd/);
    expect(manifest).to.contain(result.fingerprint);
    const inventory = await fleet(['config', 'inventory', 'mac', '--repo', repo], { env });
    expect(inventory.exitCode, inventory.stdout + inventory.stderr).to.equal(0);
  });

  it('changes nothing and sends nothing when the Mac is added again (its running agent read)', async () => {
    const again = await add('--confirm', '--json');
    expect(again.exitCode, again.stderr).to.equal(0);
    expect(json<{ outcome: string; bytesSent: number }>(again)).to.include({
      outcome: 'unchanged',
      bytesSent: 0,
    });
  });

  it('removes the Mac: the agent booted out, its plist moved where no login loads it', async () => {
    const removed = await fleet(
      [
        'host',
        'remove',
        'mac',
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
    const printed = await launchctl('print', `gui/${mac.uid}/${LABEL}`);
    expect(printed.exitCode).to.equal(113);
    expect(existsSync(join(mac.home, AGENT))).to.equal(false);
    expect(
      existsSync(join(mac.home, 'Library/Application Support/fleet/removed', `${LABEL}.plist`)),
    ).to.equal(true);
    expect(await readFile(join(repo, 'fleet.yaml'), 'utf8')).to.not.contain('mac:');
  });
});
