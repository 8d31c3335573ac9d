/**
 * The runtime lifecycle end to end through the operator's CLI against a real `systemd --user`
 * manager (contract §11, §12; catalogue 51, 54; test/src/systemd-user.ts): a node from nothing —
 * no controller, no unit, only its owner's bootstrap policy and a token — is bootstrapped over SSH
 * (the receiver, in a session without XDG_RUNTIME_DIR), its controller installed as the user unit
 * `fleet-node-01.service` (the unit its node policy names) and accepted where fleet.yaml says it
 * is — https on 127.0.0.2 and a port that is not the default, with the certificate the node made
 * and the operator pinned (issue 35: a first apply with another pin stops before anything is
 * activated, naming the one to pin; one whose controller cannot listen says why); upgraded to a
 * second build (accepted); upgraded to a
 * build that lies about its identity (rolled back, verified); rolled back on request. Each restart
 * ends the controller unit's whole control group: the runner lives in a transient unit of its own.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { certificateFingerprint, createControllerClient } from '@fleet/core';
import { fakeRuntimeArtifact } from '@fleet/testkit';
import { packedRuntimeArtifact, repackedArtifact, type RuntimeArtifact } from '../src/artifact.js';
import { fleet, json, tempDir, type FleetRun } from '../src/fleet.js';
import { carriedCommit, NODE_ID, sha256, writeRuntimeNodePolicy } from '../src/runtime-node.js';
import { requireSshd, startSshd, type Sshd } from '../src/sshd.js';
import { requireSystemdUser, type SystemdUser } from '../src/systemd-user.js';

/**
 * Where fleet.yaml says the controller is: not the `controller serve` default (127.0.0.1:7701),
 * which a first bootstrap used to listen on whatever fleet.yaml said (issue 35).
 */
const ADDRESS = '127.0.0.2';
const PORT = 7815;
/** A pin that is no certificate's: what an operator writes before the node made one. */
const NO_PIN = `sha256:${Array.from({ length: 32 }, () => '00').join(':')}`;
/** The unit the node's policy names: a first bootstrap installs the controller under it. */
const UNIT = 'fleet-node-01.service';

function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('runtime lifecycle through the CLI on a real systemd --user manager (from nothing)', function () {
  this.timeout(900_000);
  let manager: SystemdUser;
  let sshd: Sshd;
  let scratch: { path: string; cleanup: () => Promise<void> };
  let home: string;
  let artifact: RuntimeArtifact;
  let second: Awaited<ReturnType<typeof repackedArtifact>>;
  let token: string;
  /** The fingerprint of the certificate the node made, once it made one. */
  let pin = NO_PIN;
  const repo = () => join(scratch.path, 'repo');
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      ['-C', repo(), '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args],
      { encoding: 'utf8' },
    );
  const run = (args: readonly string[]): Promise<FleetRun> =>
    fleet(args, {
      cwd: scratch.path,
      env: {
        FLEET_REPO: repo(),
        FLEET_CREDENTIALS: join(scratch.path, 'credentials.json'),
        XDG_STATE_HOME: join(scratch.path, 'state'),
      },
    });
  const client = () =>
    createControllerClient({
      host: NODE_ID,
      url: `https://${ADDRESS}:${PORT}`,
      token,
      tlsFingerprint: pin,
    });
  /** fleet.yaml's pin for the host, committed. */
  async function pinCertificate(fingerprint: string): Promise<void> {
    const text = await readFile(join(repo(), 'fleet.yaml'), 'utf8');
    await writeFile(
      join(repo(), 'fleet.yaml'),
      text.replace(/fingerprint: "[^"]*"/, `fingerprint: "${fingerprint}"`),
    );
    git('add', '-A');
    git('commit', '-q', '-m', 'pin the controller certificate');
    pin = fingerprint;
  }
  const plan = async (): Promise<string> => {
    const file = join(scratch.path, `node-01-${Date.now()}.plan.json`);
    const planned = await run(['bootstrap', 'plan', NODE_ID, '--out', file, '--json']);
    expect(planned.exitCode, planned.stderr + planned.stdout).to.equal(0);
    return file;
  };
  const applyOverSsh = (file: string, timeoutSeconds: number) =>
    run([
      'bootstrap',
      'apply',
      file,
      '--confirm',
      '--recover',
      '--acceptance-timeout',
      String(timeoutSeconds),
      '--json',
    ]);

  /**
   * fleet.yaml with `file` as the canonical artifact (`version`) and the commit its build record
   * names (contract §1.8: checked, not trusted), committed.
   */
  async function makeCanonical(file: string, version: string): Promise<void> {
    const bytes = await readFile(file);
    const name = `artifacts/fleet-${version}.tgz`;
    await copyFile(file, join(repo(), name));
    const text = await readFile(join(repo(), 'fleet.yaml'), 'utf8');
    await writeFile(
      join(repo(), 'fleet.yaml'),
      text
        .replace(/^canonicalVersion: .*$/m, `canonicalVersion: ${version}`)
        .replace(
          /^artifacts:\n/m,
          `artifacts:\n  - { version: ${version}, file: ${name}, sha256: ${sha256(bytes)}, commit: ${carriedCommit(bytes) ?? git('rev-parse', 'HEAD').trim()} }\n`,
        ),
    );
    git('add', '-A');
    git('commit', '-q', '-m', `artifact ${version}`);
  }

  before(async function () {
    requireSshd(this);
    manager = await requireSystemdUser(this);
    if (!(await portFree(PORT, ADDRESS))) {
      throw new Error(`${ADDRESS}:${PORT} is taken: the bootstrapped controller listens there`);
    }
    scratch = await tempDir('fleet-runtime-systemd-');
    artifact = await packedRuntimeArtifact();
    second = await repackedArtifact(artifact, `${artifact.version}-sd.2`, scratch.path);
    // The node from nothing: a home, its owner's bootstrap policy and an operator token.
    home = manager.makeDir('fresh-node');
    await writeRuntimeNodePolicy(home, { unit: UNIT });
    manager.chown(home);
    const issued = await manager.fleet([
      'token',
      'issue',
      '--home',
      home,
      '--client',
      'operator',
      '--scope',
      'node-admin:bootstrap',
      '--scope',
      'runtime:upgrade',
      '--scope',
      'versions:read',
      '--json',
    ]);
    expect(issued.exitCode, issued.stderr).to.equal(0);
    token = (JSON.parse(issued.stdout) as { token: string }).token;
    sshd = await startSshd({
      user: { name: manager.user, uid: manager.uid, gid: manager.gid },
      forcedCommand: [manager.node, await manager.cli(), 'bootstrap', 'receive', '--home', home],
    });
    await writeFile(
      join(scratch.path, 'credentials.json'),
      `${JSON.stringify({ version: 1, hosts: { [NODE_ID]: { token, ssh: { identityFile: sshd.identityFile } } } })}\n`,
      { mode: 0o600 },
    );
    await mkdir(join(repo(), 'artifacts'), { recursive: true });
    await mkdir(join(repo(), 'hosts'), { recursive: true });
    execFileSync('git', ['init', '-q', repo()]);
    await writeFile(join(repo(), 'hosts', `${NODE_ID}.yaml`), `node_id: ${NODE_ID}\n`);
    await writeFile(
      join(repo(), 'fleet.yaml'),
      [
        'apiVersion: fleet/v1',
        'canonicalVersion: 0.0.0',
        'artifacts:',
        'hosts:',
        `  ${NODE_ID}:`,
        `    controller: https://${ADDRESS}:${PORT}`,
        `    tls: { fingerprint: "${NO_PIN}" }`,
        '    platform: linux',
        '    supervisor: systemd-user',
        '    upgrade: { strategy: tarball }',
        '    domains: []',
        `    ssh: { host: 127.0.0.1, port: ${sshd.port}, user: ${manager.user}, hostKey: "${sshd.hostKey}" }`,
        '',
      ].join('\n'),
    );
    git('add', '-A');
    git('commit', '-q', '-m', 'init');
  });

  after(async () => {
    if (manager) {
      await manager.systemctl('stop', UNIT);
      await manager.systemctl('disable', UNIT);
      await manager.systemctl('daemon-reload');
    }
    await sshd?.stop();
    await scratch?.cleanup();
  });

  it('a first bootstrap whose certificate is not the pinned one stops before activation, naming it (exit 4)', async () => {
    await makeCanonical(artifact.path, artifact.version);
    const planFile = await plan();
    const planned = JSON.parse(await readFile(planFile, 'utf8')) as {
      route: string;
      prior: { build: string | null };
      listen: unknown;
    };
    expect(planned).to.deep.include({
      route: 'ssh',
      prior: { build: null, observedThrough: 'ssh' },
    });
    expect(planned.listen).to.deep.equal({
      bind: ADDRESS,
      port: PORT,
      tls: true,
      allowedHosts: [],
      fingerprint: NO_PIN,
    });
    const human = await run(['bootstrap', 'plan', NODE_ID]);
    expect(human.stdout).to.include(
      `listen      bind ${ADDRESS}, port ${PORT}, TLS, certificate made on the node, pinned ${NO_PIN}`,
    );

    const refused = await run(['bootstrap', 'apply', planFile, '--confirm', '--recover']);
    expect(refused.exitCode, refused.stderr).to.equal(4);
    // The node made its certificate (the key stays there); the error names its fingerprint.
    const made = certificateFingerprint(
      await readFile(join(home, '.config/fleet/tls/controller-cert.pem')),
    );
    expect(refused.stderr).to.include(`hosts.${NODE_ID}.tls.fingerprint: '${made}'`);
    expect(refused.stderr).to.include('nothing was activated');
    // Nothing activated: no unit, the transaction closed before a runner started.
    expect(await manager.show(UNIT, ['LoadState'])).to.deep.equal({ LoadState: 'not-found' });
    const journal = await readFile(join(home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8');
    expect(journal).to.match(/"code":"TLS_FINGERPRINT_MISMATCH"/);
    expect(journal).to.not.match(/"step":"activated"/);
    await pinCertificate(made);
  });

  it('a controller that cannot listen: the failure says why, "manual recovery required" once (exit 6)', async () => {
    // Another program holds the address fleet.yaml names: the new controller exits at start.
    // (each connection ended at once: a socket left open would keep close() waiting)
    const squatter: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => squatter.listen(PORT, ADDRESS, resolve));
    try {
      const failed = await applyOverSsh(await plan(), 10);
      expect(failed.exitCode, failed.stderr + failed.stdout).to.equal(6);
      const message = (JSON.parse(failed.stdout) as { error: { code: string; message: string } })
        .error;
      expect(message.code).to.equal('RECOVERY_REQUIRED');
      // Its supervisor's log, or why there is none: never silence.
      expect(message.message).to.match(/controller log( unavailable)?[ :(]/);
      expect(message.message.match(/manual recovery required/g)).to.have.length(1);
      // The operator showed progress while it waited.
      expect(failed.stderr).to.match(/supervisor-restarted|activated/);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('bootstraps the node over SSH with the pin: installed, listening where fleet.yaml says, accepted from here', async () => {
    const applied = await applyOverSsh(await plan(), 90);
    expect(applied.exitCode, applied.stderr + applied.stdout).to.equal(0);
    expect(json<{ outcome: string }>(applied).outcome).to.equal('accepted');
    expect(applied.stderr).to.include(`accepting from here: https://${ADDRESS}:${PORT}`);
    // The unit runs the controller with fleet.yaml's listen, the node's own certificate.
    const unit = await readFile(join(home, '.config/systemd/user', UNIT), 'utf8');
    expect(unit).to.include(`--bind ${ADDRESS} --port ${PORT} --tls-cert`);
    expect(await portFree(7701)).to.equal(true);

    // A real unit of the user's manager, recorded by the node, running generation A.
    const record = JSON.parse(
      await readFile(join(home, '.local/state/fleet/supervisor.json'), 'utf8'),
    ) as { supervisor: string; name: string };
    expect(record).to.deep.include({ supervisor: 'systemd-user', name: UNIT });
    expect(await manager.show(UNIT, ['LoadState', 'ActiveState', 'UnitFileState'])).to.deep.equal({
      LoadState: 'loaded',
      ActiveState: 'active',
      UnitFileState: 'enabled',
    });
    const identity = await client().identity();
    expect(identity).to.deep.include({ nodeId: NODE_ID, nodeIdFlag: NODE_ID });
    expect(identity.build.sha256).to.equal(artifact.sha256);

    const status = await run(['bootstrap', 'status', NODE_ID, '--json']);
    expect(status.exitCode, status.stderr + status.stdout).to.equal(0);
    expect(json<{ through: string; status: { state: string } }>(status)).to.deep.include({
      through: 'controller',
    });
    expect(json<{ status: { state: string } }>(status).status.state).to.equal('accepted');
  });

  it('upgrades to a second build: accepted, though the restart ends the old unit whole', async () => {
    const before = await client().identity();
    await makeCanonical(second.path, second.pkg.version);
    const upgraded = await run(['upgrade', NODE_ID, '--confirm', '--json']);
    expect(upgraded.exitCode, upgraded.stderr + upgraded.stdout).to.equal(0);
    expect(json<{ outcome: string }>(upgraded).outcome).to.equal('accepted');
    const after = await client().identity();
    expect(after.build.sha256).to.equal(sha256(second.bytes));
    expect(after.pid).to.not.equal(before.pid);
    // The runner ran as a transient unit of the user manager, and left its log.
    const journal = await readFile(join(home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8');
    expect(journal).to.match(/"step":"supervisor-restarted"/);
  });

  it('upgrades to a build that lies about its identity: rolled back and verified (exit 6)', async () => {
    const liar = join(scratch.path, 'liar.tgz');
    await writeFile(
      liar,
      fakeRuntimeArtifact({ version: '0.0.0-liar', lie: { nodeId: 'node-99' } }),
    );
    await makeCanonical(liar, '0.0.0-liar');
    const rejected = await run(['upgrade', NODE_ID, '--confirm', '--acceptance-timeout', '20']);
    expect(rejected.exitCode, rejected.stderr).to.equal(6);
    expect(rejected.stderr).to.match(/rolled back/);
    expect(rejected.stderr).to.match(/node-id: expected node-01, got node-99/);
    const status = await run(['bootstrap', 'status', NODE_ID, '--json']);
    const observed = json<{ status: { state: string; observed: { live: string } } }>(status);
    expect(observed.status.state).to.equal('rolled-back');
    expect(observed.status.observed.live).to.equal(sha256(second.bytes));
    expect((await client().identity()).build.sha256).to.equal(sha256(second.bytes));
  });

  it('rolls back on request: the first build again, verified', async () => {
    const back = await run(['bootstrap', 'rollback', NODE_ID, '--confirm', '--json']);
    expect(back.exitCode, back.stderr + back.stdout).to.equal(0);
    const after = await run(['bootstrap', 'status', NODE_ID, '--json']);
    const final = json<{ status: { state: string; observed: { live: string; pointer: string } } }>(
      after,
    );
    expect(final.status.state).to.equal('rolled-back');
    expect(final.status.observed.live).to.equal(artifact.sha256);
    expect(final.status.observed.pointer).to.equal(artifact.sha256);
    expect(await manager.show(UNIT, ['ActiveState'])).to.deep.equal({ ActiveState: 'active' });
  });
});
