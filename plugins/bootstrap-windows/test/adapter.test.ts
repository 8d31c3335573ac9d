/**
 * The windows-task adapter driving a real runtime process through the testkit's fake `schtasks`
 * (on PATH): create the task from its XML, run it, observe it running the current generation with
 * the expected --node-id, change the flag, end it.
 */
import { createServer } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { runtimeCommand, runtimeLayout, type SupervisorDefinition } from '@fleet/core';
import {
  createFakeSupervisorHost,
  fakeRuntimeStarts,
  pointCurrentAt,
  processAlive,
  writeFakeGeneration,
  type FakeSupervisorHost,
} from '@fleet/testkit';
import { createWindowsTaskAdapter } from '../src/adapter.js';
import { windowsControllerSupervisor } from '../src/controller-supervisor.js';
import { createTaskProber } from '../src/prober.js';

const GEN_A = 'a3'.repeat(32);
const GEN_B = 'b4'.repeat(32);

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

describe('windows-task adapter over the fake schtasks (a real runtime process)', function () {
  this.timeout(60_000);
  const adapter = createWindowsTaskAdapter();
  const prober = createTaskProber(adapter);
  let node: FakeSupervisorHost;
  let port: number;

  const taskFor = (buildId: string, nodeId = 'node-01'): SupervisorDefinition =>
    adapter.definition({
      home: node.home,
      nodeId,
      command: runtimeCommand({
        nodePath: process.execPath,
        generationDir: runtimeLayout(node.home, 'win32').generation(buildId),
        home: node.home,
        nodeId,
        port,
      }),
    });
  const desired = (nodeId = 'node-01') => ({
    host: 'win',
    variables: { node_id: nodeId },
    canonicalVersion: '1.2.0',
    parameters: {},
  });
  /** Waits until the task's runtime recorded its start; returns its pid. */
  const runtimePid = async (nodeId: string): Promise<number> => {
    for (let i = 0; i < 200; i += 1) {
      const start = (await fakeRuntimeStarts(node.home)).find(
        (s) => s.nodeId === nodeId && processAlive(s.pid),
      );
      if (start) return start.pid;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no runtime with --node-id ${nodeId} started`);
  };

  beforeEach(async () => {
    node = await createFakeSupervisorHost({ nodeId: 'node-01', platform: 'win32' });
    port = await freePort();
    await writeFakeGeneration(node.home, GEN_A, { platform: 'win32' });
    await writeFakeGeneration(node.home, GEN_B, { platform: 'win32' });
    await pointCurrentAt(node.home, GEN_A, 'win32');
  });
  afterEach(() => node.dispose());

  it('reports no task before one is created', async () => {
    expect(await adapter.preflight(node)).to.deep.equal([]);
    expect(await adapter.observe(node)).to.deep.include({ present: false, running: false });
    expect(prober.evaluate(await prober.collect(node, {}), desired())[0]?.state).to.equal(
      'missing',
    );
  });

  it('creates the task from its XML, runs it, observes the runtime, ends it', async () => {
    await adapter.installDefinition(node, taskFor(GEN_A));
    const file = join(node.home, 'AppData/Local/fleet/supervisor/fleet-controller.xml');
    expect([...(await readFile(file)).subarray(0, 2)]).to.deep.equal([0xff, 0xfe]);
    await adapter.start(node);
    const pid = await runtimePid('node-01');

    expect(await adapter.observe(node)).to.deep.include({
      present: true,
      enabled: true,
      running: true,
      state: 'Running',
      generation: GEN_A,
      nodeIdFlag: 'node-01',
      source: 'supervisor',
    });
    const item = prober.evaluate(await prober.collect(node, {}), desired())[0];
    expect(item, item?.detail).to.deep.include({
      layer: 'runtime',
      path: '\\fleet-controller',
      state: 'current',
    });
    expect((await node.calls('schtasks')).map((argv) => argv.slice(1, 2)[0])).to.include.members([
      '/Create',
      '/Run',
      '/Query',
    ]);
    expect(await node.calls('schtasks')).to.deep.include([
      'schtasks',
      '/Create',
      '/XML',
      file,
      '/TN',
      'fleet-controller',
      '/F',
    ]);

    await adapter.stop(node);
    expect(await adapter.observe(node)).to.deep.include({ running: false });
    expect(processAlive(pid)).to.equal(false);
    expect(prober.evaluate(await prober.collect(node, {}), desired())[0]?.detail).to.contain(
      'the task is not running',
    );
  });

  it('re-creates the task for another generation and restarts into it', async () => {
    await adapter.installDefinition(node, taskFor(GEN_A));
    await adapter.start(node);
    await runtimePid('node-01');
    await pointCurrentAt(node.home, GEN_B, 'win32');
    await adapter.installDefinition(node, taskFor(GEN_B));
    await adapter.restart(node);
    await runtimePid('node-01');
    expect(await adapter.observe(node)).to.deep.include({ running: true, generation: GEN_B });
    expect(prober.evaluate(await prober.collect(node, {}), desired())[0]?.state).to.equal(
      'current',
    );
  });

  it('records a new --node-id and restarts through the ControllerSupervisor seam', async () => {
    await adapter.installDefinition(node, taskFor(GEN_A));
    await adapter.start(node);
    const old = await runtimePid('node-01');
    const supervisor = windowsControllerSupervisor(node, { timeoutMs: 20_000, pollMs: 50 });
    await supervisor.recordNodeId('node-02');
    const restarted = await supervisor.restart();
    expect(restarted.nodeId).to.equal('node-02');
    await runtimePid('node-02');
    expect(processAlive(old)).to.equal(false);
    const now = prober.evaluate(await prober.collect(node, {}), desired('node-02'))[0];
    expect(now?.state, now?.detail).to.equal('current');
    expect(await adapter.recordNodeId(node, 'node-03')).to.deep.equal({ previous: 'node-02' });
  });

  it('a run whose program never starts: observed not running, the ControllerSupervisor gives up', async () => {
    await adapter.installDefinition(node, taskFor(GEN_A));
    await node.setFaults(['start-fails']);
    const error = await rejection(
      windowsControllerSupervisor(node, { timeoutMs: 1_000, pollMs: 50 }).restart(),
    );
    expect(error.code).to.equal('ACTION_FAILED');
    const observed = await adapter.observe(node);
    expect(observed.running).to.equal(false);
    expect(observed.state).to.contain('last result 2147942402');
  });

  it("records its task as the node's supervisor when it installs it", async () => {
    await adapter.installDefinition(node, taskFor(GEN_A));
    const record = JSON.parse(
      await readFile(join(node.home, '.local/state/fleet/supervisor.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(record).to.deep.include({
      version: 1,
      supervisor: 'windows-task',
      name: 'fleet-controller',
      definition: '~/AppData/Local/fleet/supervisor/fleet-controller.xml',
    });
  });

  it('runs a detached job as a task of its own, which /End of the controller task does not end', async () => {
    await adapter.installDefinition(node, taskFor(GEN_A));
    await adapter.start(node);
    await runtimePid('node-01');
    const pidFile = join(node.home, 'job.pid');
    const launched = await adapter.launchDetached(node, {
      name: 'fleet-runtime-test',
      slot: 'runtime-runner',
      argv: [
        process.execPath,
        '-e',
        `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`,
      ],
      cwd: node.home,
      env: {},
      log: join(node.home, 'job.log'),
    });
    expect(launched).to.deep.include({ started: 'supervisor', pid: null });
    let job = 0;
    for (let i = 0; i < 200 && job === 0; i += 1) {
      job = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(processAlive(job)).to.equal(true);
    // Ending the controller's task ends its whole job object; the job is not in it.
    await adapter.restart(node);
    expect(processAlive(job), "the job outlives the controller task's /End").to.equal(true);
    // One job of a kind at a time: a second one is refused while the first runs.
    const refused = await rejection(
      adapter.launchDetached(node, {
        name: 'fleet-runtime-other',
        slot: 'runtime-runner',
        argv: [process.execPath, '-e', '0'],
        cwd: node.home,
        env: {},
        log: join(node.home, 'job.log'),
      }),
    );
    expect(refused.code).to.equal('LOCKED');
  });
});
