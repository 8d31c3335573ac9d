/**
 * The launchd adapter driving real runtime processes through the testkit's fake `launchctl` (on
 * PATH, as strict as launchd: src/fake-supervisors/launchctl.ts): the controller's LaunchAgent
 * bootstrapped from its plist, restarted with `kickstart -k`, re-bootstrapped — once — for
 * another generation or `--node-id`, stopped with `bootout`; a detached job of its own that a restart and
 * a bootout of the controller do not end; and the `launchd.agents` prober's verdicts.
 */
import { createServer } from 'node:net';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { runtimeCommand, runtimeLayout, type SupervisorDefinition } from '@fleet/core';
import {
  createFakeSupervisorHost,
  fakeRuntimeStarts,
  parsePlist,
  pointCurrentAt,
  processAlive,
  readLaunchdJob,
  writeFakeGeneration,
  type FakeSupervisorHost,
} from '@fleet/testkit';
import { createLaunchdAdapter } from '../src/adapter.js';
import { launchdControllerSupervisor } from '../src/controller-supervisor.js';
import { createAgentProber } from '../src/prober.js';

const GEN_A = 'a5'.repeat(32);
const GEN_B = 'b6'.repeat(32);
const PLIST = 'Library/LaunchAgents/dev.fleet.controller.plist';

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

describe('launchd adapter over the fake launchctl (real runtime processes)', function () {
  this.timeout(90_000);
  const adapter = createLaunchdAdapter();
  const prober = createAgentProber(adapter);
  let node: FakeSupervisorHost;
  let port: number;

  const agentFor = (buildId: string, nodeId = 'node-01'): SupervisorDefinition =>
    adapter.definition({
      home: node.home,
      nodeId,
      command: runtimeCommand({
        nodePath: process.execPath,
        generationDir: runtimeLayout(node.home, 'darwin').generation(buildId),
        home: node.home,
        nodeId,
        port,
      }),
    });
  const desired = (nodeId = 'node-01') => ({
    host: 'mac',
    variables: { node_id: nodeId },
    canonicalVersion: '1.2.0',
    parameters: {},
  });
  const verdicts = async (nodeId = 'node-01') =>
    prober.evaluate(await prober.collect(node, {}), desired(nodeId));
  /** As the runner activates a generation: the definition installed, then the one restart. */
  const activate = async (definition: SupervisorDefinition): Promise<void> => {
    await adapter.installDefinition(node, definition);
    await adapter.restart(node);
  };
  /** The launchctl verbs since call `from`. */
  const verbsSince = async (from: number): Promise<string[]> =>
    (await node.calls('launchd')).slice(from).map((argv) => argv[1] ?? '');
  /** How many runtimes of generation `buildId` have started. */
  const startsOf = async (buildId: string): Promise<number> =>
    (await fakeRuntimeStarts(node.home)).filter((s) => s.argv.some((a) => a.includes(buildId)))
      .length;
  /** Waits until a runtime with `nodeId` (other than `not`) runs; returns its pid. */
  const runtimePid = async (nodeId: string, not?: number): Promise<number> => {
    for (let i = 0; i < 400; i += 1) {
      const start = (await fakeRuntimeStarts(node.home)).find(
        (s) => s.nodeId === nodeId && s.pid !== not && processAlive(s.pid),
      );
      if (start) return start.pid;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no runtime with --node-id ${nodeId} started`);
  };

  beforeEach(async () => {
    node = await createFakeSupervisorHost({ nodeId: 'node-01', platform: 'darwin' });
    port = await freePort();
    await writeFakeGeneration(node.home, GEN_A, { platform: 'darwin' });
    await writeFakeGeneration(node.home, GEN_B, { platform: 'darwin' });
    await pointCurrentAt(node.home, GEN_A, 'darwin');
  });
  afterEach(() => node.dispose());

  it('generates an agent launchd accepts, with the keys a Mac expects, the runtime in Application Support', () => {
    const definition = agentFor(GEN_A);
    expect(definition.path).to.equal('~/Library/LaunchAgents/dev.fleet.controller.plist');
    const job = readLaunchdJob(parsePlist(definition.content));
    expect(job).to.deep.include({
      label: 'dev.fleet.controller',
      keepAlive: 'after-failure',
      runAtLoad: true,
      processType: 'Standard',
      abandonProcessGroup: false,
      stdoutPath: join(node.home, 'Library/Logs/fleet/controller.log'),
      stderrPath: join(node.home, 'Library/Logs/fleet/controller.log'),
      workingDirectory: node.home,
    });
    expect(job.argv).to.include(
      join(
        node.home,
        'Library/Application Support/fleet/runtime/generations',
        GEN_A,
        'package/bin/run.js',
      ),
    );
    expect(adapter.readDefinition(definition.content)).to.deep.include({
      generation: GEN_A,
      nodeIdFlag: 'node-01',
    });
  });

  it('reports no agent before one is installed', async () => {
    expect(await adapter.preflight(node)).to.deep.equal([]);
    expect(await adapter.observe(node)).to.deep.include({ present: false, running: false });
    expect((await verdicts())[0]?.state).to.equal('missing');
  });

  it('bootstraps the agent, which runs the generation; bootout stops it and every process of it', async () => {
    // Installing writes the plist only: a bootstrap starts the job, and that is the restart's.
    await adapter.installDefinition(node, agentFor(GEN_A));
    expect(await verbsSince(0)).to.not.include('bootstrap');
    expect(await adapter.observe(node)).to.deep.include({ present: false, running: false });
    await adapter.restart(node);
    const pid = await runtimePid('node-01');
    expect(await startsOf(GEN_A)).to.equal(1);
    expect(await adapter.observe(node)).to.deep.include({
      present: true,
      enabled: true,
      running: true,
      pid,
      generation: GEN_A,
      nodeIdFlag: 'node-01',
      source: 'supervisor',
      needsReload: false,
    });
    const [item] = await verdicts();
    expect(item, item?.detail).to.deep.include({
      path: '~/Library/LaunchAgents/dev.fleet.controller.plist',
      state: 'current',
    });
    expect(await node.calls('launchd')).to.deep.include([
      'launchctl',
      'bootstrap',
      `gui/${process.getuid?.() ?? 0}`,
      join(node.home, PLIST),
    ]);
    const record = JSON.parse(
      await readFile(join(node.home, '.local/state/fleet/supervisor.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(record).to.deep.include({
      supervisor: 'launchd',
      name: 'dev.fleet.controller',
      definition: '~/Library/LaunchAgents/dev.fleet.controller.plist',
    });

    await adapter.stop(node);
    expect(processAlive(pid)).to.equal(false);
    expect(await adapter.observe(node)).to.deep.include({ present: false, running: false });
    expect((await verdicts())[0]?.detail).to.contain('launchd has not loaded it');
    await adapter.start(node);
    await runtimePid('node-01', pid);
  });

  it('installs another generation and restarts once: the old agent booted out, the new one bootstrapped', async () => {
    await activate(agentFor(GEN_A));
    const old = await runtimePid('node-01');
    await pointCurrentAt(node.home, GEN_B, 'darwin');
    expect((await verdicts())[0]?.detail).to.contain(`it runs generation ${GEN_A.slice(0, 12)}`);
    const calls = (await node.calls('launchd')).length;
    await adapter.installDefinition(node, agentFor(GEN_B));
    // Written, not loaded: the old controller still runs, launchd still holds the old plist.
    expect(processAlive(old)).to.equal(true);
    expect(await adapter.observe(node)).to.deep.include({ generation: GEN_A, needsReload: true });
    await adapter.restart(node);
    await runtimePid('node-01', old);
    expect(processAlive(old)).to.equal(false);
    // The one restart (launchctl(1): a plist is read at bootstrap only): bootout, then bootstrap.
    const verbs = (await verbsSince(calls)).filter((verb) => verb !== 'print');
    expect(verbs).to.deep.equal(['bootout', 'bootstrap']);
    expect(await startsOf(GEN_B)).to.equal(1);
    expect(await adapter.observe(node)).to.deep.include({ running: true, generation: GEN_B });
    expect((await verdicts())[0]?.state).to.equal('current');
  });

  it('restarts with kickstart -k: a new process, the same loaded agent', async () => {
    await activate(agentFor(GEN_A));
    const old = await runtimePid('node-01');
    await adapter.restart(node);
    const now = await runtimePid('node-01', old);
    expect(now).to.not.equal(old);
    expect(await node.calls('launchd')).to.deep.include([
      'launchctl',
      'kickstart',
      '-k',
      `gui/${process.getuid?.() ?? 0}/dev.fleet.controller`,
    ]);
  });

  it('records a new --node-id in ProgramArguments and restarts through the ControllerSupervisor seam, once', async () => {
    await activate(agentFor(GEN_A));
    const old = await runtimePid('node-01');
    const supervisor = launchdControllerSupervisor(node, { timeoutMs: 20_000, pollMs: 50 });
    const before = (await node.calls('launchd')).length;
    await supervisor.recordNodeId('node-02');
    // Recorded, not yet read: launchd reads a plist only at bootstrap, which would start it.
    expect(processAlive(old)).to.equal(true);
    expect(await adapter.observe(node)).to.deep.include({
      nodeIdFlag: 'node-01',
      needsReload: true,
    });
    const restarted = await supervisor.restart();
    expect(restarted.nodeId).to.equal('node-02');
    const now = await runtimePid('node-02');
    expect(processAlive(old)).to.equal(false);
    // One restart: the changed plist bootstrapped anew, no kickstart after it.
    const verbs = (await node.calls('launchd')).slice(before).map((argv) => argv[1]);
    expect(verbs.filter((verb) => verb === 'bootstrap')).to.have.length(1);
    expect(verbs).to.not.include('kickstart');
    expect(
      (await fakeRuntimeStarts(node.home)).filter((s) => s.nodeId === 'node-02'),
    ).to.have.length(1);
    expect(restarted.pid).to.equal(now);
    const plist = await readFile(join(node.home, PLIST), 'utf8');
    const argv = readLaunchdJob(parsePlist(plist)).argv;
    expect(argv[argv.indexOf('--node-id') + 1]).to.equal('node-02');
    const [item] = await verdicts('node-02');
    expect(item?.state, item?.detail).to.equal('current');
    expect(await adapter.recordNodeId(node, 'node-03')).to.deep.equal({ previous: 'node-02' });
  });

  it('a controller that cannot start: observed failed with its exit, the seam gives up', async () => {
    const script = join(node.home, 'crash.js');
    await writeFile(script, 'process.exit(3);\n');
    const crashing = adapter.definition({
      home: node.home,
      nodeId: 'node-01',
      command: [process.execPath, script, '--node-id', 'node-01'],
    });
    await adapter.installDefinition(node, crashing);
    const error = await rejection(
      launchdControllerSupervisor(node, { timeoutMs: 60_000, pollMs: 50 }).restart(),
    );
    // Given up on its failed exit, not on the timeout: launchd has no failed state of its own
    // (KeepAlive starts it again), so the adapter calls a non-zero exit failed.
    expect(error.code).to.equal('ACTION_FAILED');
    expect(error.message).to.match(/reports the controller failed: .*last exit code 3/);
    // KeepAlive restarts it after each failure until launchd (the fake: 5 times) gives up.
    let observed = await adapter.observe(node);
    for (let i = 0; i < 200 && observed.running; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      observed = await adapter.observe(node);
    }
    expect(observed.running).to.equal(false);
    expect(observed.state).to.contain('last exit code 3');
  });

  it('says which plist is not what fleet generated, and which changed since launchd loaded it', async () => {
    await activate(agentFor(GEN_A));
    await runtimePid('node-01');
    const file = join(node.home, PLIST);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('<integer>5</integer>', '<integer>1</integer>'));
    expect((await verdicts())[0]?.detail).to.contain('not what fleet generated');
    await writeFile(file, agentFor(GEN_A, 'node-09').content);
    const [item] = await verdicts();
    expect(item?.state).to.equal('stale');
    expect(item?.detail).to.contain('changed since launchd loaded it');
  });

  it('runs a detached job as a job of its own: a restart and a bootout of the controller leave it', async () => {
    await activate(agentFor(GEN_A));
    await runtimePid('node-01');
    const pidFile = join(node.home, 'job.pid');
    const launched = await adapter.launchDetached(node, {
      name: 'fleet-runtime-01',
      slot: 'runtime-runner',
      argv: [
        process.execPath,
        '-e',
        `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`,
      ],
      cwd: node.home,
      env: { PATH: '/usr/bin:/bin', HOME: node.home, FLEET_HINT: 'kept' },
      log: join(node.home, 'job.log'),
    });
    expect(launched).to.deep.include({ started: 'supervisor' });
    expect(launched.started === 'supervisor' && launched.pid).to.be.a('number');
    const jobPid = launched.started === 'supervisor' ? (launched.pid as number) : 0;
    const jobPlist = await readFile(
      join(node.home, 'Library/Application Support/fleet/jobs/dev.fleet.job.runtime-runner.plist'),
      'utf8',
    );
    expect(readLaunchdJob(parsePlist(jobPlist)).environment).to.deep.include({
      FLEET_HINT: 'kept',
    });
    await adapter.restart(node);
    await adapter.stop(node);
    expect(processAlive(jobPid)).to.equal(true);
    const again = await rejection(
      adapter.launchDetached(node, {
        name: 'fleet-runtime-02',
        slot: 'runtime-runner',
        argv: [process.execPath, '-e', ''],
        cwd: node.home,
        env: {},
        log: join(node.home, 'job.log'),
      }),
    );
    expect(again.code).to.equal('LOCKED');
  });

  it('needs a GUI login: without one the preflight says so and nothing is installed', async () => {
    await node.setFaults(['no-gui-session']);
    const [problem] = await adapter.preflight(node);
    expect(problem?.code).to.equal('LAUNCHD_DOMAIN_UNAVAILABLE');
  });

  it("reports every scheduled report's agent, and the old label scheme as stale", async () => {
    await activate(agentFor(GEN_A));
    await runtimePid('node-01');
    const agents = join(node.home, 'Library/LaunchAgents');
    const plist = (label: string, code: number) =>
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<plist version="1.0">',
        '<dict>',
        '  <key>Label</key>',
        `  <string>${label}</string>`,
        '  <key>ProgramArguments</key>',
        '  <array>',
        `    <string>${process.execPath}</string>`,
        '    <string>-e</string>',
        `    <string>process.exit(${code})</string>`,
        '  </array>',
        '  <key>RunAtLoad</key>',
        '  <true/>',
        '  <key>StartInterval</key>',
        '  <integer>1800</integer>',
        '</dict>',
        '</plist>',
        '',
      ].join('\n');
    await mkdir(agents, { recursive: true });
    for (const [label, code] of [
      ['dev.fleet.report-drift', 1],
      ['dev.fleet.report-version', 4],
      ['dev.fleet.schedule.drift', 0],
    ] as const) {
      await writeFile(join(agents, `${label}.plist`), plist(label, code));
      await chmod(join(agents, `${label}.plist`), 0o644);
      if (label !== 'dev.fleet.schedule.drift')
        await node.processes.run({
          command: 'launchctl',
          args: ['bootstrap', `gui/${process.getuid?.() ?? 0}`, join(agents, `${label}.plist`)],
        });
    }
    for (let i = 0; i < 200; i += 1) {
      const facts = await prober.collect(node, {});
      if (facts.schedules.every((s) => !s.loaded || s.lastExitCode !== null)) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const items = await verdicts();
    const byPath = new Map(items.map((i) => [i.path, i]));
    expect(byPath.get('~/Library/LaunchAgents/dev.fleet.report-drift.plist')?.state).to.equal(
      'current',
    );
    expect(byPath.get('~/Library/LaunchAgents/dev.fleet.report-version.plist')?.detail).to.contain(
      'its last run exited 4',
    );
    const legacy = byPath.get('~/Library/LaunchAgents/dev.fleet.schedule.drift.plist');
    expect(legacy?.state).to.equal('stale');
    expect(legacy?.detail).to.contain('old label scheme');
  });
});
