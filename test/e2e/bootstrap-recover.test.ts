/**
 * `fleet bootstrap plan|apply --recover` over SSH (contract §12; catalogue 47, 48, 54): a node whose
 * controller — a unit of a real `systemd --user` manager — is down, the node's user reached
 * through a real OpenSSH server on 127.0.0.1 whose only command for the operator's
 * key is the fixed receiver (`authorized_keys` forced command), and the host key pinned in
 * fleet.yaml. The bundle carries the plan and the artifact — no credentials, no policy.
 */
import { execFileSync } from 'node:child_process';
import { access, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { statePaths } from '@fleet/controller';
import { packedRuntimeArtifact, repackedArtifact } from '../src/artifact.js';
import { fleet, json, tempDir, type FleetRun } from '../src/fleet.js';
import { generateKey, requireSshd, startSshd, type Sshd } from '../src/sshd.js';
import { NODE_ID, startRuntimeNode, type RuntimeNode } from '../src/runtime-node.js';

describe('bootstrap over SSH with --recover (real sshd, pinned host key, forced command)', function () {
  this.timeout(600_000);
  let node: RuntimeNode;
  let sshd: Sshd;
  let scratch: { path: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  let second: Awaited<ReturnType<typeof repackedArtifact>>;
  const repo = () => join(scratch.path, 'repo');
  const receiverLog = () => join(statePaths(node.home).root, 'receiver.log');

  async function writeRepo(dir: string, hostKey: string): Promise<void> {
    await mkdir(join(dir, 'artifacts'), { recursive: true });
    await mkdir(join(dir, 'hosts'), { recursive: true });
    await copyFile(second.path, join(dir, 'artifacts', 'fleet.tgz'));
    execFileSync('git', ['init', '-q', dir]);
    const git = (...args: string[]) =>
      execFileSync(
        'git',
        ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args],
        {
          encoding: 'utf8',
        },
      );
    await writeFile(join(dir, 'hosts', `${NODE_ID}.yaml`), `node_id: ${NODE_ID}\n`);
    await writeFile(
      join(dir, 'fleet.yaml'),
      'apiVersion: fleet/v1\ncanonicalVersion: 0.0.0\nhosts: {}\n',
    );
    git('add', '-A');
    git('commit', '-q', '-m', 'init');
    const { createHash } = await import('node:crypto');
    const sha = createHash('sha256').update(second.bytes).digest('hex');
    await writeFile(
      join(dir, 'fleet.yaml'),
      [
        'apiVersion: fleet/v1',
        `canonicalVersion: ${second.pkg.version}`,
        'artifacts:',
        `  - version: ${second.pkg.version}`,
        '    file: artifacts/fleet.tgz',
        `    sha256: ${sha}`,
        `    commit: ${second.commit}`, // the artifact's own (its build record)
        'hosts:',
        `  ${NODE_ID}:`,
        `    controller: http://127.0.0.1:${node.port}`,
        '    platform: linux',
        '    supervisor: systemd-user',
        '    upgrade: { strategy: tarball }',
        '    domains: []',
        `    ssh: { host: 127.0.0.1, port: ${sshd.port}, user: ${sshd.user}, hostKey: "${hostKey}" }`,
        '',
      ].join('\n'),
    );
    git('add', '-A');
    git('commit', '-q', '-m', 'runtime artifact');
  }

  const run = (args: readonly string[], repoDir = repo()): Promise<FleetRun> =>
    fleet(args, { cwd: scratch.path, env: { ...env, FLEET_REPO: repoDir } });

  before(async function () {
    requireSshd(this);
    scratch = await tempDir('fleet-recover-');
    second = await repackedArtifact(await packedRuntimeArtifact(), '0.1.0-recover.2', scratch.path);
    node = await startRuntimeNode(this);
    const { manager } = node;
    sshd = await startSshd({
      // The node's user logs in; its session has no XDG_RUNTIME_DIR (catalogue 54): the
      // receiver and the adapter find the user manager themselves.
      user: { name: manager.user, uid: manager.uid, gid: manager.gid },
      forcedCommand: [
        manager.node,
        await manager.cli(),
        'bootstrap',
        'receive',
        '--home',
        node.home,
      ],
    });
    const token = await node.issueToken('operator', [
      'node-admin:bootstrap',
      'runtime:upgrade',
      'versions:read',
    ]);
    const credentials = join(scratch.path, 'credentials.json');
    await writeFile(
      credentials,
      `${JSON.stringify({ version: 1, hosts: { [NODE_ID]: { token, ssh: { identityFile: sshd.identityFile } } } })}\n`,
      { mode: 0o600 },
    );
    env = { FLEET_CREDENTIALS: credentials, XDG_STATE_HOME: join(scratch.path, 'state') };
    await writeRepo(repo(), sshd.hostKey);
    // The controller becomes unavailable.
    expect((await node.systemctl('stop')).exitCode).to.equal(0);
  });

  after(async () => {
    await sshd?.stop();
    await node?.dispose();
    await scratch?.cleanup();
  });

  it('refuses a changed host key before anything is sent (exit 7)', async () => {
    const other = await generateKey(join(scratch.path, 'other_host_key'));
    const bad = join(scratch.path, 'repo-bad-key');
    await writeRepo(bad, other.publicKey.split(' ').slice(0, 2).join(' '));
    const planned = await run(['bootstrap', 'plan', NODE_ID, '--json'], bad);
    expect(planned.exitCode, planned.stderr).to.equal(7);
    expect(json<{ error: { code: string } }>(planned).error.code).to.equal('HOSTKEY_MISMATCH');
    // Nothing reached the receiver: no request was logged, nothing was staged.
    await access(receiverLog()).then(
      () => expect.fail('the receiver ran'),
      () => undefined,
    );
    expect(await sshd.log()).to.not.match(/Accepted publickey/);
  });

  it('plans through the receiver, needs --recover, and applies: accepted, controller back', async () => {
    const planFile = join(scratch.path, 'recover.plan.json');
    const planned = await run(['bootstrap', 'plan', NODE_ID, '--out', planFile, '--json']);
    expect(planned.exitCode, planned.stderr + planned.stdout).to.equal(0);
    const plan = json<{ id: string; route: string; prior: { build: string | null } }>(planned);
    expect(plan.route).to.equal('ssh');
    expect(plan.prior.build).to.equal(node.artifact.sha256);

    const withoutRecover = await run(['bootstrap', 'apply', planFile, '--confirm']);
    expect(withoutRecover.exitCode, withoutRecover.stderr).to.equal(5);
    expect(withoutRecover.stderr).to.match(/--recover/);

    const applied = await run([
      'bootstrap',
      'apply',
      planFile,
      '--confirm',
      '--recover',
      '--acceptance-timeout',
      '60',
      '--json',
    ]);
    expect(applied.exitCode, applied.stderr + applied.stdout).to.equal(0);
    expect(json<{ outcome: string }>(applied).outcome).to.equal('accepted');

    // The controller answers again, from the new generation, and says which plan it applied.
    const identity = await node.client.identity();
    expect(identity.build.sha256).to.equal(
      json<{ status: { transaction: { target: string } } }>(applied).status.transaction.target,
    );
    const status = await run(['bootstrap', 'status', NODE_ID, '--json']);
    expect(status.exitCode, status.stderr + status.stdout).to.equal(0);
    const observed = json<{
      through: string;
      status: { state: string; transaction: { planId: string } };
    }>(status);
    expect(observed.through).to.equal('controller');
    expect(observed.status.state).to.equal('accepted');
    expect(observed.status.transaction.planId).to.equal(plan.id);

    // The bundle brought no credentials: the node's token store and policy are its own.
    const log = await readFile(receiverLog(), 'utf8');
    expect(log).to.match(/"status"/);
    expect(log).to.match(/"apply"/);
    const credentials = await readFile(env['FLEET_CREDENTIALS'] as string, 'utf8');
    const token = (JSON.parse(credentials) as { hosts: Record<string, { token: string }> }).hosts[
      NODE_ID
    ]?.token as string;
    const journal = await readFile(join(statePaths(node.home).journal, 'runtime.jsonl'), 'utf8');
    expect(journal).to.not.contain(token);
    expect(log).to.not.contain(token);

    // The stage and the activate are in the node's audit log, in the chain the controller writes:
    // `fleet audit show --home` reads them, `fleet audit verify --home` finds it intact.
    const shown = await run(['audit', 'show', '--home', node.home, '--json']);
    expect(shown.exitCode, shown.stderr).to.equal(0);
    const records = json<{
      records: { operationId: string | null; client: string; operation: string; outcome: string }[];
    }>(shown).records.filter((record) => record.client === 'ssh:forced-command');
    const stage = records.find((record) => record.operation === 'runtime-stage');
    const activate = records.find((record) => record.operation === 'runtime-activate');
    expect(stage?.outcome).to.equal('ok');
    expect(activate?.outcome).to.equal('ok');
    expect(activate?.operationId).to.equal(stage?.operationId);
    const verified = await run(['audit', 'verify', '--home', node.home]);
    expect(verified.exitCode, verified.stderr + verified.stdout).to.equal(0);
  });

  it('does not send a generation the node holds again: a second recovery sends the plan only', async () => {
    // The controller becomes unavailable again; the node holds the generation it last ran.
    expect((await node.systemctl('stop')).exitCode).to.equal(0);
    const planFile = join(scratch.path, 'recover-again.plan.json');
    const planned = await run(['bootstrap', 'plan', NODE_ID, '--out', planFile, '--json']);
    expect(planned.exitCode, planned.stderr + planned.stdout).to.equal(0);
    const applied = await run([
      'bootstrap',
      'apply',
      planFile,
      '--confirm',
      '--recover',
      '--acceptance-timeout',
      '60',
      '--json',
    ]);
    expect(applied.exitCode, applied.stderr + applied.stdout).to.equal(0);
    expect(applied.stderr).to.match(
      /the node holds generation [0-9a-f]{12}: sending the plan only \(\d+ bytes\)/,
    );
    expect(applied.stderr).to.not.match(/sending the bundle/);
    expect(json<{ outcome: string }>(applied).outcome).to.equal('accepted');
  });
});
