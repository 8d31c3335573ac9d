/**
 * The systemd-user adapter driving a real runtime process through the testkit's fake `systemctl`
 * (on PATH): install the unit, restart, observe the process running the current generation with
 * the expected --node-id, change the flag, stop — and the catalogue-54 faults.
 */
import { createServer } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { runtimeCommand, runtimeLayout, type SupervisorDefinition } from '@fleet/core';
import {
  createFakeSupervisorHost,
  fakeRuntimeStarts,
  pointCurrentAt,
  processAlive,
  waitForRuntimeStart,
  writeFakeGeneration,
  type FakeSupervisorHost,
} from '@fleet/testkit';
import { createSystemdUserAdapter } from '../src/adapter.js';
import { systemdControllerSupervisor } from '../src/controller-supervisor.js';
import { createUnitProber } from '../src/prober.js';

const GEN_A = 'a1'.repeat(32);
const GEN_B = 'b2'.repeat(32);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('systemd-user adapter over the fake systemctl (a real runtime process)', function () {
  this.timeout(60_000);
  const adapter = createSystemdUserAdapter();
  const prober = createUnitProber(adapter);
  let node: FakeSupervisorHost;
  let port: number;

  /** The unit for `buildId` with `nodeId`. */
  const unitFor = (buildId: string, nodeId = 'node-01'): SupervisorDefinition =>
    adapter.definition({
      home: node.home,
      nodeId,
      command: runtimeCommand({
        nodePath: process.execPath,
        generationDir: runtimeLayout(node.home, 'linux').generation(buildId),
        home: node.home,
        nodeId,
        port,
      }),
    });
  const desired = (nodeId = 'node-01') => ({
    host: 'alpha',
    variables: { node_id: nodeId },
    canonicalVersion: '1.2.0',
    parameters: {},
  });

  beforeEach(async () => {
    node = await createFakeSupervisorHost({ nodeId: 'node-01' });
    port = await freePort();
    await writeFakeGeneration(node.home, GEN_A);
    await writeFakeGeneration(node.home, GEN_B);
    await pointCurrentAt(node.home, GEN_A);
  });
  afterEach(() => node.dispose());

  it('passes its preflight on a healthy user manager', async () => {
    expect(await adapter.preflight(node)).to.deep.equal([]);
  });

  it('installs the unit, restarts it and observes the runtime it started', async () => {
    await adapter.installDefinition(node, unitFor(GEN_A));
    expect(
      await readFile(join(node.home, '.config/systemd/user/fleet-controller.service'), 'utf8'),
    ).to.contain(`generations/${GEN_A}/package/bin/run.js`);
    await adapter.restart(node);

    const observed = await adapter.observe(node);
    expect(observed).to.deep.include({
      present: true,
      enabled: true,
      running: true,
      generation: GEN_A,
      nodeIdFlag: 'node-01',
      source: 'process',
      needsReload: false,
    });
    expect(processAlive(observed.pid)).to.equal(true);
    const start = await waitForRuntimeStart(node.home, observed.pid as number);
    expect(start.argv.slice(1)).to.deep.equal([
      join(runtimeLayout(node.home, 'linux').generation(GEN_A), 'package/bin/run.js'),
      'controller',
      'serve',
      '--home',
      node.home,
      '--node-id',
      'node-01',
      '--port',
      String(port),
    ]);

    const facts = await prober.collect(node, {});
    expect(prober.evaluate(facts, desired())).to.deep.equal([
      {
        layer: 'runtime',
        path: '~/.config/systemd/user/fleet-controller.service',
        state: 'current',
        detail: `running generation ${GEN_A.slice(0, 12)} (pid ${observed.pid}) with --node-id node-01`,
      },
    ]);

    // the adapter went through exactly these systemctl calls, never a shell
    expect(
      (await node.calls('systemd')).map((argv) => argv.slice(0, 3).join(' ')),
    ).to.include.members([
      'systemctl --user daemon-reload',
      'systemctl --user enable',
      'systemctl --user restart',
    ]);
    expect(
      node.processes.calls.every(
        (call) => call.command === 'systemctl' || call.command === 'loginctl',
      ),
    ).to.equal(true);

    await adapter.stop(node);
    const stopped = await adapter.observe(node);
    expect(stopped).to.deep.include({ running: false, state: 'inactive (dead)', source: 'file' });
    expect(processAlive(observed.pid)).to.equal(false);
  });

  it('activates another generation: the prober sees the old one running until the restart', async () => {
    await adapter.installDefinition(node, unitFor(GEN_A));
    await adapter.start(node);
    await pointCurrentAt(node.home, GEN_B);
    await adapter.installDefinition(node, unitFor(GEN_B));
    const before = prober.evaluate(await prober.collect(node, {}), desired());
    expect(before[0]?.state).to.equal('stale');
    expect(before[0]?.detail).to.contain(
      `it runs generation ${GEN_A.slice(0, 12)}, current is ${GEN_B.slice(0, 12)}`,
    );
    await adapter.restart(node);
    const after = await adapter.observe(node);
    expect(after).to.deep.include({ running: true, generation: GEN_B });
    const now = prober.evaluate(await prober.collect(node, {}), desired())[0];
    expect(now?.state, now?.detail).to.equal('current');
  });

  it('records a new --node-id and restarts through the ControllerSupervisor seam', async () => {
    await adapter.installDefinition(node, unitFor(GEN_A));
    await adapter.start(node);
    const supervisor = systemdControllerSupervisor(node, { timeoutMs: 20_000, pollMs: 50 });
    expect([supervisor.kind, supervisor.replacesCaller]).to.deep.equal(['systemd-user', true]);
    await supervisor.recordNodeId('node-02');
    // recorded, not yet running: the process still carries the old flag, the file the new one
    const pending = prober.evaluate(await prober.collect(node, {}), desired('node-02'));
    expect(
      pending[0]?.detail,
      await readFile(join(node.stateDir, 'systemd/runs/fleet-controller.service.log'), 'utf8'),
    ).to.contain('it runs with --node-id node-01, expected node-02');
    const restarted = await supervisor.restart();
    expect(restarted.nodeId).to.equal('node-02');
    expect(processAlive(restarted.pid)).to.equal(true);
    expect((await waitForRuntimeStart(node.home, restarted.pid as number)).nodeId).to.equal(
      'node-02',
    );
    const now = prober.evaluate(await prober.collect(node, {}), desired('node-02'))[0];
    expect(now?.state, now?.detail).to.equal('current');
    expect(await adapter.recordNodeId(node, 'node-03')).to.deep.equal({ previous: 'node-02' });
  });

  it('reports a unit changed on disk without daemon-reload (NeedDaemonReload=yes)', async () => {
    await adapter.installDefinition(node, unitFor(GEN_A));
    await adapter.start(node);
    const path = join(node.home, '.config/systemd/user/fleet-controller.service');
    await writeFile(path, (await readFile(path, 'utf8')).replace('RestartSec=5s', 'RestartSec=7s'));
    expect(await adapter.observe(node)).to.deep.include({ needsReload: true, running: true });
    const item = prober.evaluate(await prober.collect(node, {}), desired())[0];
    expect(item?.state).to.equal('stale');
    expect(item?.detail).to.contain('NeedDaemonReload=yes');
  });

  it('runs a detached job as a transient unit, which a restart of the controller unit does not end', async () => {
    await adapter.installDefinition(node, unitFor(GEN_A));
    await adapter.start(node);
    const log = join(node.home, 'job.log');
    const launched = await adapter.launchDetached(node, {
      name: 'fleet-runtime-test',
      slot: 'runtime-runner',
      argv: [
        process.execPath,
        '-e',
        'console.log(process.env.FLEET_JOB_KNOB); setInterval(() => {}, 1000)',
      ],
      cwd: node.home,
      env: { ...node.env, FLEET_JOB_KNOB: 'carried by name' },
      log,
    });
    expect(launched.started).to.equal('supervisor');
    const job = launched.started === 'supervisor' ? (launched.pid as number) : 0;
    expect(processAlive(job)).to.equal(true);
    await adapter.restart(node);
    expect(processAlive(job), 'the job outlives the restart of the controller unit').to.equal(true);
    // Its environment went by name, never as a value on systemd-run's command line.
    const call = (await node.calls('systemd')).find((argv) => argv[0] === 'systemd-run') ?? [];
    expect(call).to.include('--setenv=FLEET_JOB_KNOB');
    expect(call.join(' ')).to.not.contain('carried by name');
    for (let i = 0; i < 100 && !(await readFile(log, 'utf8')).includes('carried'); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await readFile(log, 'utf8')).to.contain('carried by name');
  });

  it("records its unit as the node's supervisor when it installs it", async () => {
    await adapter.installDefinition(node, unitFor(GEN_A));
    const record = JSON.parse(
      await readFile(join(node.home, '.local/state/fleet/supervisor.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(record).to.deep.include({
      version: 1,
      supervisor: 'systemd-user',
      name: 'fleet-controller.service',
      definition: '~/.config/systemd/user/fleet-controller.service',
    });
  });

  describe('catalogue 54: the user manager failing', () => {
    it('no lingering: preflight says so before anything is changed', async () => {
      await node.setFaults(['no-linger']);
      const problems = await adapter.preflight(node);
      expect(problems.map((p) => p.code)).to.deep.equal(['NO_LINGER']);
      expect(problems[0]?.message).to.contain('would stop at logout');
      expect(await node.calls('systemd')).to.not.deep.include([
        'systemctl',
        '--user',
        'daemon-reload',
      ]);
    });

    it('no user bus: preflight fails early, the prober reports an error item', async () => {
      await node.setFaults(['no-bus']);
      const problems = await adapter.preflight(node);
      expect(problems.map((p) => p.code)).to.deep.equal(['USER_BUS_UNAVAILABLE']);
      expect(problems[0]?.message).to.contain('Failed to connect to bus');
      const item = prober.evaluate(await prober.collect(node, {}), desired())[0];
      expect(item?.state).to.equal('error');
    });

    it('a daemon-reload that does not take: installDefinition fails instead of pretending', async () => {
      await adapter.installDefinition(node, unitFor(GEN_A));
      await node.setFaults(['daemon-reload-ignored']);
      const error = await rejection(adapter.installDefinition(node, unitFor(GEN_B)));
      expect(error.code).to.equal('ACTION_FAILED');
      expect(error.message).to.contain('NeedDaemonReload=yes');
    });

    it('a start that fails: restart throws ACTION_FAILED and the unit is observed failed', async () => {
      await adapter.installDefinition(node, unitFor(GEN_A));
      await node.setFaults(['start-fails']);
      const error = await rejection(adapter.restart(node));
      expect(error.code).to.equal('ACTION_FAILED');
      expect(error.message).to.contain('Job for fleet-controller.service failed');
      expect(await adapter.observe(node)).to.deep.include({
        running: false,
        state: 'failed (failed)',
      });
    });

    it('a runtime that crash-loops: Restart=on-failure gives up, the ControllerSupervisor rejects', async () => {
      await writeFakeGeneration(node.home, GEN_B, { behaviour: 'crash' });
      await adapter.installDefinition(node, unitFor(GEN_B));
      const error = await rejection(
        systemdControllerSupervisor(node, { timeoutMs: 20_000, pollMs: 50 }).restart(),
      );
      expect(error.code).to.equal('ACTION_FAILED');
      expect(error.message).to.match(/failed/);
      expect((await fakeRuntimeStarts(node.home)).length).to.be.greaterThan(1);
    });
  });
});
