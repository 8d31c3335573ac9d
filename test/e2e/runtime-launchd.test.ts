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
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { expect } from 'chai';
import { readSupervisorRecord, runtimeLayout } from '@fleet/core';
import { fakeRuntimeArtifact } from '@fleet/testkit';
import { repackedArtifact } from '../src/artifact.js';
import { json, pidAlive } from '../src/fleet.js';
import { LAUNCHD_LABEL, macNode, type MacNode } from '../src/launchd-node.js';
import { NODE_ID, sha256 } from '../src/runtime-node.js';
import { requireSshd } from '../src/sshd.js';

const RUNNER_LABEL = 'dev.fleet.job.runtime-runner';
const JOURNAL = '.local/state/fleet/journal/runtime.jsonl';

describe('runtime lifecycle of a Mac node under launchd (fake launchctl, real controller)', function () {
  this.timeout(1_200_000);
  let node: MacNode;
  let second: Awaited<ReturnType<typeof repackedArtifact>>;
  /**
   * Staging fsyncs the runtime's 5,800 files: on a loaded machine that outlasts the operator's
   * default per-request timeout (120 s), so the upgrades wait longer (`--timeout`, as for a slow
   * node).
   */
  const SLOW = ['--timeout', '900000'];
  const status = async () =>
    json<{
      status: { state: string; next: string; observed: { live: string; pointer: string } };
    }>(await node.run(['bootstrap', 'status', NODE_ID, '--json'])).status;

  before(async function () {
    requireSshd(this);
    // The Mac (test/src/launchd-node.ts): its owner's policy says launchd runs the controller;
    // launchd's user domain has launchctl and node on its PATH and runs its jobs as on macOS.
    node = await macNode();
    second = await repackedArtifact(node.artifact, `${node.artifact.version}-ld.2`, node.scratch);
  });

  after(async () => {
    await node?.dispose();
  });

  it('bootstraps the Mac over SSH: a LaunchAgent of the gui domain, the Mac layout, accepted', async () => {
    await node.makeCanonical(node.artifact.path, node.artifact.version);
    const file = join(node.scratch, 'bootstrap.plan.json');
    const planned = await node.run(['bootstrap', 'plan', NODE_ID, '--out', file, '--json']);
    expect(planned.exitCode, planned.stderr + planned.stdout).to.equal(0);
    expect(json<{ route: string }>(planned).route).to.equal('ssh');
    const applied = await node.run([
      'bootstrap',
      'apply',
      file,
      '--confirm',
      '--recover',
      '--json',
    ]);
    expect(applied.exitCode, applied.stderr + applied.stdout).to.equal(0);
    expect(json<{ outcome: string }>(applied).outcome).to.equal('accepted');

    // The agent in ~/Library/LaunchAgents, recorded by the node, running generation A from
    // ~/Library/Application Support/fleet/runtime.
    expect(await readSupervisorRecord(node.host.home)).to.deep.include({
      supervisor: 'launchd',
      name: LAUNCHD_LABEL,
    });
    const generation = runtimeLayout(node.host.home, 'darwin').generation(node.artifact.sha256);
    expect(generation).to.include('/Library/Application Support/fleet/runtime/');
    expect(await readFile(node.agentPlist, 'utf8')).to.include(`<string>${generation}/`);
    const service = await node.printed();
    expect(service.state).to.equal('running');
    const identity = await node.client().identity();
    expect(identity).to.deep.include({ nodeId: NODE_ID, nodeIdFlag: NODE_ID, pid: service.pid });
    expect(identity.build.sha256).to.equal(node.artifact.sha256);
  });

  it('upgrades to a second build: accepted, the runner a launchd job of its own', async () => {
    const before = await node.client().identity();
    await node.makeCanonical(second.path, second.pkg.version);
    const upgraded = await node.run(['upgrade', NODE_ID, '--confirm', ...SLOW, '--json']);
    expect(upgraded.exitCode, upgraded.stderr + upgraded.stdout).to.equal(0);
    expect(json<{ outcome: string }>(upgraded).outcome).to.equal('accepted');
    const after = await node.client().identity();
    expect(after.build.sha256).to.equal(sha256(second.bytes));
    // The old controller's job ended whole (bootout); the new one is the agent's process.
    expect(pidAlive(before.pid)).to.equal(false);
    expect((await node.printed()).pid).to.equal(after.pid);
    // The runner was bootstrapped as a service of its own, from a plist launchd never loads at
    // login, and ran to its end: the agent's bootout did not end it.
    const jobPlist = join(
      node.host.home,
      'Library/Application Support/fleet/jobs',
      `${RUNNER_LABEL}.plist`,
    );
    expect(await node.host.calls('launchd')).to.deep.include([
      'launchctl',
      'bootstrap',
      `gui/${node.uid}`,
      jobPlist,
    ]);
    expect(node.host.run('launchd', RUNNER_LABEL)).to.deep.include({
      state: 'exited',
      exitCode: 0,
    });
    const journal = await readFile(join(node.host.home, JOURNAL), 'utf8');
    expect(journal).to.match(/"step":"supervisor-restarted"/);
    expect(journal).to.match(/"step":"accepted"/);
  });

  it('upgrades to a build that lies about its identity: rolled back and verified (exit 6)', async () => {
    const liar = join(node.scratch, 'liar.tgz');
    await writeFile(
      liar,
      fakeRuntimeArtifact({ version: '0.0.0-liar', lie: { nodeId: 'node-99' } }),
    );
    await node.makeCanonical(liar, '0.0.0-liar');
    const rejected = await node.run([
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
    expect((await node.client().identity()).build.sha256).to.equal(sha256(second.bytes));
  });

  it('a runner killed after the restart is RUNNER_DIED; --resume ends the upgrade accepted', async () => {
    await node.armFailpoint('runtime.journal.supervisor-restarted:kill');
    await node.makeCanonical(node.artifact.path, node.artifact.version);
    const upgraded = await node.run([
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
    expect(node.host.run('launchd', RUNNER_LABEL)).to.deep.include({ signal: 'SIGKILL' });
    const stranded = await status();
    expect(stranded).to.deep.include({ state: 'in-progress', next: 'resume-acceptance' });

    const resumed = await node.run([
      'upgrade',
      NODE_ID,
      '--resume',
      '--confirm',
      ...SLOW,
      '--json',
    ]);
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).to.equal(0);
    expect(json<{ outcome: string; resumed: boolean }>(resumed)).to.deep.include({
      outcome: 'accepted',
      resumed: true,
    });
    expect((await status()).state).to.equal('accepted');
    expect((await node.client().identity()).build.sha256).to.equal(node.artifact.sha256);
    await node.armFailpoint(null);
  });

  it('rolls back on request: the previous build again, verified, under the agent', async () => {
    const back = await node.run(['bootstrap', 'rollback', NODE_ID, '--confirm', '--json']);
    expect(back.exitCode, back.stderr + back.stdout).to.equal(0);
    const final = await status();
    expect(final.state).to.equal('rolled-back');
    expect(final.observed.live).to.equal(sha256(second.bytes));
    expect(final.observed.pointer).to.equal(sha256(second.bytes));
    expect((await node.printed()).state).to.equal('running');
    expect((await node.client().identity()).build.sha256).to.equal(sha256(second.bytes));
  });
});
