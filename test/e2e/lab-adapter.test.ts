/**
 * The lab bootstrap adapter (contract §12–§13) driving a real lab: `fleet lab up --hosts 1`, the
 * adapter loaded the way the controller loads it (the CLI's oclif config fires `fleet:register`,
 * `FLEET_LAB_SUPERVISOR` names the socket), definitions for two "generations" whose package is the
 * dev checkout (a real controller must print its JSON line), then installDefinition → restart →
 * observe, a node-id change, stop and start, and the refusals: another port, a file that is no
 * definition. `lab down` still stops a controller started from a definition.
 */
import { expect } from 'chai';
import { mkdir, readFile, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Config } from '@oclif/core';
import {
  FLEET_PLUGIN_API_VERSION,
  REGISTER_HOOK,
  Registry,
  assembleRegistrations,
  createControllerClient,
  parseNodePolicy,
  runtimeCommand,
  runtimeLayout,
  writeDefinitionFile,
  type BootstrapAdapter,
  type LabDocument,
  type NodeContext,
  type SupervisorDefinition,
} from '@fleet/core';
import { LAB_SUPERVISOR_ENV, labSupervisorClient, type LabSupervisorState } from '@fleet/lab';
import { FixedClock, RecordedProcessRunner, pointCurrentAt } from '@fleet/testkit';
import { ROOT, destroyLab, fleet, json, pidAlive, tempDir } from '../src/fleet.js';

const GEN_A = 'a1'.repeat(32);
const GEN_B = 'b2'.repeat(32);
const DEFINITION = '.config/fleet/lab-controller.json';

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

/** The registry of the CLI itself, assembled from its oclif config as `loadRegistry` does. */
async function cliRegistry(dataDir: string): Promise<Registry> {
  const saved = process.env['FLEET_DATA_DIR'];
  process.env['FLEET_DATA_DIR'] = dataDir; // no user plugins of the machine running the tests
  try {
    const config = await Config.load(join(ROOT, 'packages', 'cli'));
    const { successes, failures } = await config.runHook(
      REGISTER_HOOK,
      { apiVersion: FLEET_PLUGIN_API_VERSION },
      10_000,
      true,
    );
    const ref = (plugin: { name: string; version: string; type: string }) => ({
      name: plugin.name,
      version: plugin.version,
      type: plugin.type,
    });
    const { accepted, problems } = assembleRegistrations(
      [
        ...successes.map((s) => ({
          plugin: ref(s.plugin),
          ok: true as const,
          result: s.result as unknown,
        })),
        ...failures.map((f) => ({ plugin: ref(f.plugin), ok: false as const, error: f.error })),
      ],
      FLEET_PLUGIN_API_VERSION,
    );
    return new Registry(accepted, problems);
  } finally {
    if (saved === undefined) delete process.env['FLEET_DATA_DIR'];
    else process.env['FLEET_DATA_DIR'] = saved;
  }
}

describe('lab bootstrap adapter on a real lab', function () {
  this.timeout(180_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let dir: string;
  let document: LabDocument;
  let home: string;
  let port: number;
  let socket: string;
  let token: string;
  let registry: Registry;
  let adapter: BootstrapAdapter;
  let ctx: NodeContext & { processes: RecordedProcessRunner };

  /** A fresh adapter from the registry's descriptor, made with `FLEET_LAB_SUPERVISOR=socket`. */
  const adapterAt = async (at: string | undefined): Promise<BootstrapAdapter> => {
    const descriptor = registry.bootstrapAdapters().find((a) => a.descriptor.supervisor === 'lab');
    if (!descriptor?.descriptor.load) throw new Error('no lab adapter');
    const saved = process.env[LAB_SUPERVISOR_ENV];
    if (at === undefined) delete process.env[LAB_SUPERVISOR_ENV];
    else process.env[LAB_SUPERVISOR_ENV] = at;
    try {
      return await descriptor.descriptor.load();
    } finally {
      if (saved === undefined) delete process.env[LAB_SUPERVISOR_ENV];
      else process.env[LAB_SUPERVISOR_ENV] = saved;
    }
  };

  /** The definition of generation `buildId` with `nodeId` (and `overridePort`). */
  const definitionFor = (
    buildId: string,
    nodeId: string,
    overridePort = port,
  ): SupervisorDefinition =>
    adapter.definition({
      home,
      nodeId,
      command: runtimeCommand({
        nodePath: process.execPath,
        generationDir: runtimeLayout(home, 'linux').generation(buildId),
        home,
        nodeId,
        port: overridePort,
      }),
      environment: { FLEET_LAB_ADAPTER_TEST: buildId.slice(0, 4) },
    });

  const identity = () =>
    createControllerClient({
      host: 'node-01',
      url: `http://127.0.0.1:${port}`,
      token,
      timeoutMs: 10_000,
    }).identity();

  const supervisorState = () =>
    readJson<LabSupervisorState>(join(dir, 'nodes', 'node-01', 'supervisor.json'));

  const environOf = async (pid: number): Promise<string[]> =>
    (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    tmp = await tempDir('fleet-labad-');
    dir = join(tmp.path, 'lab');
    const run = await fleet(['lab', 'up', '--hosts', '1', '--dir', dir, '--json']);
    expect(run.exitCode, run.stderr).to.equal(0);
    document = json<LabDocument>(run);
    const host = document.hosts[0] as LabDocument['hosts'][number];
    home = host.home;
    port = Number(new URL(host.controller).port);
    socket = join(dir, 'nodes', 'node-01', 'supervisor.sock');
    token =
      (await readJson<{ hosts: Record<string, { token: string }> }>(document.credentials)).hosts[
        'node-01'
      ]?.token ?? '';
    // Two "generations" whose package is the dev checkout: a real controller, started from a path
    // under generations/<build-id>/ (what the adapter and the supervisor read the generation from).
    for (const buildId of [GEN_A, GEN_B]) {
      const generation = runtimeLayout(home, 'linux').generation(buildId);
      await mkdir(generation, { recursive: true });
      await symlink(join(ROOT, 'packages', 'cli'), join(generation, 'package'));
    }
    await pointCurrentAt(home, GEN_A);
    registry = await cliRegistry(join(tmp.path, 'data'));
    adapter = await adapterAt(socket);
    ctx = {
      home,
      platform: 'linux',
      nodeId: 'node-01',
      clock: new FixedClock(),
      processes: new RecordedProcessRunner(),
      secrets: () => Promise.resolve(new Map<string, string>()),
    };
  });
  after(async () => {
    if (dir) await destroyLab(dir);
    await tmp?.cleanup();
  });

  it("the CLI's registry lists the lab adapter next to systemd-user and windows-task", () => {
    expect(registry.problems).to.deep.equal([]);
    expect(
      registry
        .bootstrapAdapters()
        .map((a) => `${a.descriptor.supervisor} ${a.plugin.name}`)
        .sort(),
    ).to.deep.equal([
      'lab @fleet/cli',
      'launchd @fleet/plugin-bootstrap-launchd',
      'systemd-user @fleet/plugin-bootstrap-systemd',
      'windows-task @fleet/plugin-bootstrap-windows',
    ]);
    expect(adapter).to.include({ supervisor: 'lab', pointer: 'symlink' });
  });

  it('lab up wrote the node policy: the config domains, bootstrap through lab, 0600 in a 0700 dir', async () => {
    const path = join(home, '.config', 'fleet', 'node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(path, 'utf8'), path);
    expect(Object.keys(policy.domains).sort()).to.deep.equal([
      'files',
      'harness-policy',
      'router',
      'transport-identity',
    ]);
    expect(policy.domains['files']?.patterns).to.deep.equal([
      '~/.config/fleet-demo/**',
      '~/.gitconfig',
    ]);
    expect(policy.bootstrap).to.deep.equal({ allow: true, supervisors: ['lab'] });
    expect(policy.supervisor).to.deep.include({ kind: 'lab' });
    expect(Object.values(policy.domains).every((d) => d.actions === undefined)).to.equal(true);
    expect((await stat(path)).mode & 0o777).to.equal(0o600);
    expect((await stat(join(home, '.config', 'fleet'))).mode & 0o777).to.equal(0o700);
  });

  it('passes its preflight; without a supervisor it reports LAB_SUPERVISOR_UNAVAILABLE', async () => {
    expect(await adapter.preflight(ctx)).to.deep.equal([]);
    for (const at of [undefined, join(tmp.path, 'nobody.sock')]) {
      const problems = await (await adapterAt(at)).preflight(ctx);
      expect(problems.map((p) => p.code)).to.deep.equal(['LAB_SUPERVISOR_UNAVAILABLE']);
    }
  });

  it('observes the dev-checkout controller while no definition is installed', async () => {
    const observed = await adapter.observe(ctx);
    expect(observed).to.deep.include({
      present: false,
      running: true,
      state: 'running',
      nodeIdFlag: 'node-01',
      source: 'process',
      needsReload: false,
    });
    expect(observed.generation).to.equal(undefined);
    expect(observed.pid).to.equal((await supervisorState()).pid);
    expect(observed.command).to.include(join(ROOT, 'packages', 'cli', 'bin', 'run.js'));
  });

  it('installs a definition, restarts, and observes the new process, argv and node id', async () => {
    const before = await adapter.observe(ctx);
    const definition = definitionFor(GEN_A, 'node-01');
    await adapter.installDefinition(ctx, definition);
    expect(await readFile(join(home, DEFINITION), 'utf8')).to.equal(definition.content);
    expect((await stat(join(home, DEFINITION))).mode & 0o777).to.equal(0o600);
    // installed, not yet running: the running controller is still the old one
    expect(await adapter.observe(ctx)).to.deep.include({
      present: true,
      pid: before.pid,
      needsReload: true,
    });

    await adapter.restart(ctx);
    const observed = await adapter.observe(ctx);
    expect(observed).to.deep.include({
      present: true,
      running: true,
      state: 'running',
      generation: GEN_A,
      nodeIdFlag: 'node-01',
      source: 'process',
      needsReload: false,
    });
    expect(observed.pid).to.be.a('number').and.not.equal(before.pid);
    expect(pidAlive(before.pid as number)).to.equal(false);
    expect(observed.command).to.deep.equal([
      ...adapter.readDefinition(definition.content).command,
      '--json',
    ]);
    const environ = await environOf(observed.pid as number);
    expect(environ).to.include(`${LAB_SUPERVISOR_ENV}=${socket}`);
    expect(environ).to.include(`FLEET_LAB_ADAPTER_TEST=${GEN_A.slice(0, 4)}`);
    expect((await identity()).nodeId).to.equal('node-01');
    expect(await supervisorState()).to.deep.include({
      pid: observed.pid,
      state: 'running',
      flags: { nodeId: 'node-01', port },
    });
  });

  it('a second definition with another generation and --node-id takes over at the restart', async () => {
    await adapter.installDefinition(ctx, definitionFor(GEN_B, 'node-01b'));
    await adapter.restart(ctx);
    const observed = await adapter.observe(ctx);
    expect(observed).to.deep.include({
      running: true,
      generation: GEN_B,
      nodeIdFlag: 'node-01b',
      source: 'process',
    });
    expect(await environOf(observed.pid as number)).to.include(
      `FLEET_LAB_ADAPTER_TEST=${GEN_B.slice(0, 4)}`,
    );
    expect((await identity()).nodeId).to.equal('node-01b');
    expect((await supervisorState()).flags).to.deep.equal({ nodeId: 'node-01b', port });
  });

  it('recordNodeId rewrites the definition; the next restart runs it', async () => {
    expect(await adapter.recordNodeId(ctx, 'node-01')).to.deep.equal({ previous: 'node-01b' });
    expect(adapter.readDefinition(await readFile(join(home, DEFINITION), 'utf8'))).to.include({
      nodeIdFlag: 'node-01',
      generation: GEN_B,
    });
    expect(await adapter.observe(ctx)).to.deep.include({
      nodeIdFlag: 'node-01b',
      needsReload: true,
    });
    await adapter.restart(ctx);
    expect(await adapter.observe(ctx)).to.deep.include({
      running: true,
      generation: GEN_B,
      nodeIdFlag: 'node-01',
      needsReload: false,
    });
    expect((await identity()).nodeId).to.equal('node-01');
  });

  it("a restart with nodeId (transport-identity's path) rewrites the definition's --node-id too", async () => {
    const client = labSupervisorClient(socket);
    const state = await client.restart({ nodeId: 'node-01c' });
    expect(state.flags.nodeId).to.equal('node-01c');
    expect(adapter.readDefinition(await readFile(join(home, DEFINITION), 'utf8'))).to.include({
      nodeIdFlag: 'node-01c',
      generation: GEN_B,
    });
    expect(await adapter.observe(ctx)).to.deep.include({ nodeIdFlag: 'node-01c', pid: state.pid });
    expect((await identity()).nodeId).to.equal('node-01c');
    await client.restart({ nodeId: 'node-01' });
    expect((await identity()).nodeId).to.equal('node-01');
  });

  it('stop stops the controller and keeps the supervisor; a restart starts it again', async () => {
    const running = await adapter.observe(ctx);
    await adapter.stop(ctx);
    const stopped = await adapter.observe(ctx);
    expect(stopped).to.deep.include({ running: false, state: 'stopped', present: true });
    expect(stopped.pid).to.equal(undefined);
    expect(pidAlive(running.pid as number)).to.equal(false);
    const record = await supervisorState();
    expect(record).to.deep.include({ state: 'stopped', pid: null });
    expect(pidAlive(record.supervisorPid)).to.equal(true);
    // stays stopped: no crash restart
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await adapter.observe(ctx)).running).to.equal(false);

    await adapter.start(ctx);
    const again = await adapter.observe(ctx);
    expect(again).to.deep.include({ running: true, state: 'running', generation: GEN_B });
    expect((await identity()).nodeId).to.equal('node-01');
  });

  it('refuses a definition with another port: the adapter before writing, the supervisor at a start', async () => {
    const good = await readFile(join(home, DEFINITION), 'utf8');
    const wrong = definitionFor(GEN_A, 'node-01', port + 1);
    const refused = await rejection(adapter.installDefinition(ctx, wrong));
    expect(refused.message).to.contain(`this lab host's port is fixed at ${port}`);
    expect(await readFile(join(home, DEFINITION), 'utf8'), 'nothing written').to.equal(good);

    // Written behind the adapter's back: the supervisor refuses it itself (state failed).
    await writeDefinitionFile(home, wrong);
    const failed = await rejection(adapter.restart(ctx));
    expect(failed.message).to.contain(`--port is "${port + 1}"`);
    const record = await supervisorState();
    expect(record).to.deep.include({ state: 'failed', pid: null });
    expect(record.error).to.contain('lab-controller.json').and.contain(`fixed at ${port}`);
    expect(await adapter.observe(ctx)).to.deep.include({ running: false, state: 'failed' });

    await adapter.installDefinition(ctx, definitionFor(GEN_A, 'node-01'));
    await adapter.restart(ctx);
    expect(await adapter.observe(ctx)).to.deep.include({ running: true, generation: GEN_A });
  });

  it('refuses a file that is no definition, never guessing; without one it runs the dev checkout', async () => {
    await writeFile(join(home, DEFINITION), '{"schema":"fleet.lab-controller/v1","command":[]}');
    const failed = await rejection(adapter.restart(ctx));
    expect(failed.message).to.contain('is not a lab controller definition');
    expect(await supervisorState()).to.deep.include({ state: 'failed', pid: null });

    await unlink(join(home, DEFINITION));
    await adapter.restart(ctx);
    const observed = await adapter.observe(ctx);
    expect(observed).to.deep.include({ present: false, running: true, nodeIdFlag: 'node-01' });
    expect(observed.command).to.include(join(ROOT, 'packages', 'cli', 'bin', 'run.js'));
    expect((await identity()).nodeId).to.equal('node-01');
  });

  it('lab down stops a controller started from a definition', async () => {
    await adapter.installDefinition(ctx, definitionFor(GEN_A, 'node-01'));
    await adapter.restart(ctx);
    const { pid, supervisorPid } = await supervisorState();
    const down = await fleet(['lab', 'down', '--dir', dir]);
    expect(down.exitCode, down.stderr).to.equal(0);
    expect(pidAlive(pid as number)).to.equal(false);
    expect(pidAlive(supervisorPid)).to.equal(false);
    // the adapter ran no processes of its own: everything went through the control socket
    expect(ctx.processes.calls).to.deep.equal([]);
  });
});

describe('the stop request in a --virtual lab', function () {
  this.timeout(120_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let dir: string;

  before(async () => {
    tmp = await tempDir('fleet-labvs-');
    dir = join(tmp.path, 'lab');
  });
  after(async () => {
    if (dir) await destroyLab(dir);
    await tmp?.cleanup();
  });

  it('stops one node and starts it again; its controller is no process of its own', async () => {
    const run = await fleet(['lab', 'up', '--virtual', '--hosts', '2', '--dir', dir, '--json']);
    expect(run.exitCode, run.stderr).to.equal(0);
    const document = json<LabDocument>(run);
    const host = document.hosts[0] as LabDocument['hosts'][number];
    const socket = join(dir, 'nodes', host.name, 'supervisor.sock');
    const client = labSupervisorClient(socket);
    const token = (
      await readJson<{ hosts: Record<string, { token: string }> }>(document.credentials)
    ).hosts[host.name]?.token;
    const health = () =>
      createControllerClient({
        host: host.name,
        url: host.controller,
        token: token ?? '',
        timeoutMs: 2_000,
      })
        .identity()
        .then(
          (identity) => identity.nodeId,
          (error: { code?: string }) => error.code,
        );

    expect(await client.stop()).to.deep.include({ state: 'stopped', pid: null, virtual: true });
    expect(await health()).to.equal('HOST_UNREACHABLE');
    expect(await client.restart()).to.deep.include({ state: 'running', virtual: true });
    expect(await health()).to.equal(host.name);

    const ctx = {
      home: host.home,
      platform: 'linux' as const,
      nodeId: host.name,
      clock: new FixedClock(),
      processes: new RecordedProcessRunner(),
      secrets: () => Promise.resolve(new Map<string, string>()),
    };
    const registry = await cliRegistry(join(tmp.path, 'data'));
    const descriptor = registry.bootstrapAdapters().find((a) => a.descriptor.supervisor === 'lab');
    process.env[LAB_SUPERVISOR_ENV] = socket;
    let adapter: BootstrapAdapter;
    try {
      adapter = await (descriptor?.descriptor.load as () => Promise<BootstrapAdapter>)();
    } finally {
      delete process.env[LAB_SUPERVISOR_ENV];
    }
    expect((await adapter.preflight(ctx)).map((p) => p.code)).to.deep.equal([
      'LAB_SUPERVISOR_VIRTUAL',
    ]);
  });
});
