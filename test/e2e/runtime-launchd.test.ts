/**
 * The runtime lifecycle of a Mac node end to end (contract §12; ADR 0020, ADR 0022): a node from
 * nothing — its owner's node policy (`supervisor: launchd`) and a token — bootstrapped over a real
 * OpenSSH server through the real receiver, its controller installed as the LaunchAgent
 * `dev.fleet.controller` and accepted; upgraded to a second build (accepted: the runner is a
 * launchd job of its own, so the `bootout` that replaces the agent cannot end it); upgraded to a
 * build that lies about its identity (rolled back, verified); a runner killed after the restart
 * (`RUNNER_DIED`), then `fleet upgrade --resume` (accepted); and a rollback on request.
 *
 * No Mac runs here: launchd is the testkit's strict fake `launchctl` (its rules cite
 * launchd.plist(5) and launchctl(1)), and every fleet process on the node — the receiver in the
 * SSH login, the controller, the runner — is a real Node process of the real packed runtime that
 * reports `process.platform === 'darwin'` (the testkit's `as-darwin` import, ADR 0022), so the
 * node takes its macOS code paths: the launchd adapter, `~/Library/Application Support/fleet/`.
 * What this does not prove: Node on macOS, APFS, the real launchd.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { expect } from 'chai';
import {
  createControllerClient,
  defaultNodePolicy,
  readSupervisorRecord,
  runtimeLayout,
} from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import {
  AS_DARWIN_NODE_OPTIONS,
  FAKE_SUPERVISOR_BIN,
  createFakeSupervisorHost,
  fakeRuntimeArtifact,
  type FakeSupervisorHost,
} from '@fleet/testkit';
import { packedRuntimeArtifact, repackedArtifact, type RuntimeArtifact } from '../src/artifact.js';
import { FLEET_BIN, fleet, json, pidAlive, tempDir, waitFor, type FleetRun } from '../src/fleet.js';
import { carriedCommit, NODE_ID, sha256 } from '../src/runtime-node.js';
import { freePort, requireSshd, startSshd, type Sshd } from '../src/sshd.js';

const LABEL = 'dev.fleet.controller';
const RUNNER_LABEL = 'dev.fleet.job.runtime-runner';
const JOURNAL = '.local/state/fleet/journal/runtime.jsonl';

describe('runtime lifecycle of a Mac node under launchd (fake launchctl, real controller)', function () {
  this.timeout(1_200_000);
  let host: FakeSupervisorHost;
  let sshd: Sshd;
  let scratch: { path: string; cleanup: () => Promise<void> };
  let artifact: RuntimeArtifact;
  let second: Awaited<ReturnType<typeof repackedArtifact>>;
  let token: string;
  let port: number;
  const uid = process.getuid?.() ?? 0;
  const repo = () => join(scratch.path, 'repo');
  const agentPlist = () => join(host.home, 'Library/LaunchAgents', `${LABEL}.plist`);
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      ['-C', repo(), '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args],
      { encoding: 'utf8' },
    );
  /**
   * Staging fsyncs the runtime's 5,800 files: on a loaded machine that outlasts the operator's
   * default per-request timeout (120 s), so the upgrades wait longer (`--timeout`, as for a slow
   * node).
   */
  const SLOW = ['--timeout', '900000'];
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
    createControllerClient({ host: NODE_ID, url: `http://127.0.0.1:${port}`, token });
  /** `launchctl ARGS` on the node, as its owner would type it. */
  const launchctl = (...args: string[]) =>
    host.processes.run({ command: 'launchctl', args, timeoutMs: 60_000 });
  /** The controller's service as `launchctl print` shows it. */
  async function printed(label = LABEL): Promise<{ state: string; pid: number | null }> {
    const result = await launchctl('print', `gui/${uid}/${label}`);
    expect(result.exitCode, result.stderr).to.equal(0);
    return {
      state: /^\tstate = (.*)$/m.exec(result.stdout)?.[1] ?? '',
      pid: Number(/^\tpid = (\d+)$/m.exec(result.stdout)?.[1] ?? Number.NaN) || null,
    };
  }
  const status = async () =>
    json<{
      status: { state: string; next: string; observed: { live: string; pointer: string } };
    }>(await run(['bootstrap', 'status', NODE_ID, '--json'])).status;

  /** fleet.yaml's canonical artifact is `file` (`version`), committed. */
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

  /**
   * Until the controller launchd runs answers: `launchctl bootstrap` returns once launchd started
   * the process, before it listens — a request sent at once is refused (`HOST_UNREACHABLE:
   * connection refused`), as it would be from an owner's shell.
   */
  async function answering(): Promise<void> {
    await waitFor(
      async () => {
        const { pid } = await printed();
        const identity = await client()
          .identity()
          .catch(() => null);
        return pid !== null && identity?.pid === pid;
      },
      120_000,
      'the controller the agent runs to answer',
    );
  }

  /**
   * Arms (or with `null` disarms) `FLEET_FAILPOINT` for the controller — and so for the runners it
   * starts, which get its environment — as the node's owner would: the agent's
   * `EnvironmentVariables` edited, the agent booted out and bootstrapped again (launchd has no
   * reload); then waits for the new controller to answer.
   */
  async function armFailpoint(value: string | null): Promise<void> {
    const text = (await readFile(agentPlist(), 'utf8')).replace(
      /\n {4}<key>FLEET_FAILPOINT<\/key>\n {4}<string>[^<]*<\/string>/,
      '',
    );
    const armed =
      value === null
        ? text
        : text.replace(
            '<key>EnvironmentVariables</key>\n  <dict>',
            `<key>EnvironmentVariables</key>\n  <dict>\n    <key>FLEET_FAILPOINT</key>\n    <string>${value}</string>`,
          );
    await writeFile(agentPlist(), armed);
    expect((await launchctl('bootout', `gui/${uid}/${LABEL}`)).exitCode).to.equal(0);
    const loaded = await launchctl('bootstrap', `gui/${uid}`, agentPlist());
    expect(loaded.exitCode, loaded.stderr).to.equal(0);
    await answering();
  }

  before(async function () {
    requireSshd(this);
    scratch = await tempDir('fleet-runtime-launchd-');
    artifact = await packedRuntimeArtifact();
    second = await repackedArtifact(artifact, `${artifact.version}-ld.2`, scratch.path);
    port = await freePort();
    // The Mac: launchd's user domain has launchctl and node on its PATH, and runs its jobs as on
    // macOS; the owner's policy says launchd runs the controller.
    host = await createFakeSupervisorHost({ platform: 'darwin' });
    const path = [FAKE_SUPERVISOR_BIN, dirname(process.execPath), '/usr/bin:/bin:/usr/sbin:/sbin'];
    await host.setLaunchdPath(path.join(delimiter));
    await host.runJobsOnMac();
    await writeNodePolicy(host.home, {
      ...defaultNodePolicy([], {
        bootstrap: { allow: true, supervisors: ['launchd'] },
        supervisor: { kind: 'launchd', label: LABEL },
      }),
      runtime: { allowUnsigned: true },
    });
    const issued = await fleet([
      'token',
      'issue',
      '--home',
      host.home,
      '--client',
      'operator',
      ...['node-admin:bootstrap', 'runtime:upgrade', 'versions:read'].flatMap((s) => [
        '--scope',
        s,
      ]),
      '--json',
    ]);
    expect(issued.exitCode, issued.stderr).to.equal(0);
    token = (JSON.parse(issued.stdout) as { token: string }).token;
    // The login session of the Mac: its PATH has launchctl, and node reports darwin.
    sshd = await startSshd({
      forcedCommand: [
        '/usr/bin/env',
        `PATH=${path.join(delimiter)}`,
        `NODE_OPTIONS=${AS_DARWIN_NODE_OPTIONS}`,
        process.execPath,
        FLEET_BIN,
        'bootstrap',
        'receive',
        '--home',
        host.home,
      ],
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
        `    controller: http://127.0.0.1:${port}`,
        '    platform: darwin',
        '    supervisor: launchd',
        '    upgrade: { strategy: tarball }',
        '    domains: []',
        `    ssh: { host: 127.0.0.1, port: ${sshd.port}, user: ${sshd.user}, hostKey: "${sshd.hostKey}" }`,
        '',
      ].join('\n'),
    );
    git('add', '-A');
    git('commit', '-q', '-m', 'init');
  });

  after(async () => {
    await sshd?.stop();
    await host?.dispose();
    await scratch?.cleanup();
  });

  it('bootstraps the Mac over SSH: a LaunchAgent of the gui domain, the Mac layout, accepted', async () => {
    await makeCanonical(artifact.path, artifact.version);
    const file = join(scratch.path, 'bootstrap.plan.json');
    const planned = await run(['bootstrap', 'plan', NODE_ID, '--out', file, '--json']);
    expect(planned.exitCode, planned.stderr + planned.stdout).to.equal(0);
    expect(json<{ route: string }>(planned).route).to.equal('ssh');
    const applied = await run(['bootstrap', 'apply', file, '--confirm', '--recover', '--json']);
    expect(applied.exitCode, applied.stderr + applied.stdout).to.equal(0);
    expect(json<{ outcome: string }>(applied).outcome).to.equal('accepted');

    // The agent in ~/Library/LaunchAgents, recorded by the node, running generation A from
    // ~/Library/Application Support/fleet/runtime.
    expect(await readSupervisorRecord(host.home)).to.deep.include({
      supervisor: 'launchd',
      name: LABEL,
    });
    const generation = runtimeLayout(host.home, 'darwin').generation(artifact.sha256);
    expect(generation).to.include('/Library/Application Support/fleet/runtime/');
    expect(await readFile(agentPlist(), 'utf8')).to.include(`<string>${generation}/`);
    const service = await printed();
    expect(service.state).to.equal('running');
    const identity = await client().identity();
    expect(identity).to.deep.include({ nodeId: NODE_ID, nodeIdFlag: NODE_ID, pid: service.pid });
    expect(identity.build.sha256).to.equal(artifact.sha256);
  });

  it('upgrades to a second build: accepted, the runner a launchd job of its own', async () => {
    const before = await client().identity();
    await makeCanonical(second.path, second.pkg.version);
    const upgraded = await run(['upgrade', NODE_ID, '--confirm', ...SLOW, '--json']);
    expect(upgraded.exitCode, upgraded.stderr + upgraded.stdout).to.equal(0);
    expect(json<{ outcome: string }>(upgraded).outcome).to.equal('accepted');
    const after = await client().identity();
    expect(after.build.sha256).to.equal(sha256(second.bytes));
    // The old controller's job ended whole (bootout); the new one is the agent's process.
    expect(pidAlive(before.pid)).to.equal(false);
    expect((await printed()).pid).to.equal(after.pid);
    // The runner was bootstrapped as a service of its own, from a plist launchd never loads at
    // login, and ran to its end: the agent's bootout did not end it.
    const jobPlist = join(
      host.home,
      'Library/Application Support/fleet/jobs',
      `${RUNNER_LABEL}.plist`,
    );
    expect(await host.calls('launchd')).to.deep.include([
      'launchctl',
      'bootstrap',
      `gui/${uid}`,
      jobPlist,
    ]);
    expect(host.run('launchd', RUNNER_LABEL)).to.deep.include({ state: 'exited', exitCode: 0 });
    const journal = await readFile(join(host.home, JOURNAL), 'utf8');
    expect(journal).to.match(/"step":"supervisor-restarted"/);
    expect(journal).to.match(/"step":"accepted"/);
  });

  it('upgrades to a build that lies about its identity: rolled back and verified (exit 6)', async () => {
    const liar = join(scratch.path, 'liar.tgz');
    await writeFile(
      liar,
      fakeRuntimeArtifact({ version: '0.0.0-liar', lie: { nodeId: 'node-99' } }),
    );
    await makeCanonical(liar, '0.0.0-liar');
    const rejected = await run([
      'upgrade',
      NODE_ID,
      '--confirm',
      '--acceptance-timeout',
      '20',
      ...SLOW,
    ]);
    expect(rejected.exitCode, rejected.stderr).to.equal(6);
    expect(rejected.stderr).to.match(/rolled back/);
    expect(rejected.stderr).to.match(/node-id: expected node-01, got node-99/);
    const observed = await status();
    expect(observed.state).to.equal('rolled-back');
    expect(observed.observed.live).to.equal(sha256(second.bytes));
    expect((await client().identity()).build.sha256).to.equal(sha256(second.bytes));
  });

  it('a runner killed after the restart is RUNNER_DIED; --resume ends the upgrade accepted', async () => {
    await armFailpoint('runtime.journal.supervisor-restarted:kill');
    await makeCanonical(artifact.path, artifact.version);
    const upgraded = await run([
      'upgrade',
      NODE_ID,
      '--confirm',
      '--acceptance-timeout',
      '8',
      ...SLOW,
      '--json',
    ]);
    expect(upgraded.exitCode, upgraded.stderr + upgraded.stdout).to.equal(6);
    expect(json<{ error: { code: string } }>(upgraded).error.code).to.equal('RUNNER_DIED');
    // The runner's job ended by the kill; the new controller runs under the agent.
    expect(host.run('launchd', RUNNER_LABEL)).to.deep.include({ signal: 'SIGKILL' });
    const stranded = await status();
    expect(stranded).to.deep.include({ state: 'in-progress', next: 'resume-acceptance' });

    const resumed = await run(['upgrade', NODE_ID, '--resume', '--confirm', ...SLOW, '--json']);
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).to.equal(0);
    expect(json<{ outcome: string; resumed: boolean }>(resumed)).to.deep.include({
      outcome: 'accepted',
      resumed: true,
    });
    expect((await status()).state).to.equal('accepted');
    expect((await client().identity()).build.sha256).to.equal(artifact.sha256);
    await armFailpoint(null);
  });

  it('rolls back on request: the previous build again, verified, under the agent', async () => {
    const back = await run(['bootstrap', 'rollback', NODE_ID, '--confirm', '--json']);
    expect(back.exitCode, back.stderr + back.stdout).to.equal(0);
    const final = await status();
    expect(final.state).to.equal('rolled-back');
    expect(final.observed.live).to.equal(sha256(second.bytes));
    expect(final.observed.pointer).to.equal(sha256(second.bytes));
    expect((await printed()).state).to.equal('running');
    expect((await client().identity()).build.sha256).to.equal(sha256(second.bytes));
  });
});
