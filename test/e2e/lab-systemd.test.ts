/**
 * `fleet lab up --supervisor systemd-user` against a real `systemd --user` manager (contract §13,
 * §10.2, §12; test/src/systemd-user.ts): every lab controller is a real unit of the user's
 * manager, installed through the bootstrap-systemd adapter and recorded by the node; a
 * transport-identity `--node-id` change rewrites the unit's ExecStart, reloads, restarts and the
 * running controller carries the new id — the switch runs in a transient unit of its own, which
 * the restart of the controller's unit cannot end; a change whose controller cannot start is
 * rolled back (exit 6) with the old ExecStart; `fleet drift` reports each controller's unit as a
 * `runtime` item (stale once its file changed without a daemon-reload), and so does `fleet version`
 * (stale, exit 1; a stopped unit leaves its host unreachable); a router install runs the
 * node policy's reload action, a real `systemctl --user reload` of a real unit; `lab down` stops
 * and removes the units.
 *
 * Everything runs as the harness's unprivileged user, with its own copy of the packed CLI.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  createControllerClient,
  formatNodePolicy,
  nodePolicyFile,
  readNodePolicyFile,
  receiptSchema,
  type DriftReport,
  type LabDocument,
  type Receipt,
  type VersionReport,
} from '@fleet/core';
import { pidAlive, waitFor, type FleetRun } from '../src/fleet.js';
import { requireSystemdUser, type SystemdUser } from '../src/systemd-user.js';

const IDENTITY = '.config/fleet/transport.yaml';

describe('a lab of real systemd --user units (lab up --supervisor systemd-user)', function () {
  this.timeout(600_000);
  let manager: SystemdUser;
  let dir: string;
  let lab: LabDocument;
  let tokens: Record<string, { token: string }>;

  const labDir = () => join(dir, 'lab');
  const env = () => ({
    FLEET_REPO: lab.repo,
    FLEET_CREDENTIALS: lab.credentials,
    XDG_STATE_HOME: join(dir, 'operator-state'),
  });
  const run = (args: readonly string[]): Promise<FleetRun> =>
    manager.fleet(args, { env: env(), cwd: dir });
  const home = (host: string) => lab.hosts.find((h) => h.name === host)?.home ?? '';
  const client = (host: string) =>
    createControllerClient({
      host,
      url: lab.hosts.find((h) => h.name === host)?.controller ?? '',
      token: tokens[host]?.token ?? '',
      timeoutMs: 10_000,
    });
  async function record(host: string): Promise<{ supervisor: string; name: string }> {
    return JSON.parse(
      await readFile(join(home(host), '.local/state/fleet/supervisor.json'), 'utf8'),
    ) as { supervisor: string; name: string };
  }
  async function unitFile(host: string): Promise<string> {
    return readFile(join(home(host), '.config/systemd/user', (await record(host)).name), 'utf8');
  }
  async function runningArgv(host: string): Promise<string[]> {
    const { MainPID } = await manager.show((await record(host)).name, ['MainPID']);
    return (await readFile(`/proc/${MainPID}/cmdline`, 'utf8')).split('\0');
  }
  async function commitNodeId(host: string, nodeId: string): Promise<void> {
    const file = join(lab.repo, 'hosts', `${host}.yaml`);
    const text = await readFile(file, 'utf8');
    const edited = text.replace(`"${host}"`, `"${nodeId}"`);
    await manager.run('sh', ['-c', 'printf %s "$1" > "$2"', 'sh', edited, file]);
    const git = (...args: string[]) =>
      manager.run('git', [
        '-C',
        lab.repo,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@e.invalid',
        ...args,
      ]);
    expect((await git('commit', '-qam', `${host}: new node id`)).exitCode).to.equal(0);
  }
  /** Writes `text` to `file` as the user (its files stay its own, 0600). */
  async function writeAsUser(file: string, text: string): Promise<void> {
    const wrote = await manager.run('sh', [
      '-c',
      'umask 077; printf %s "$1" > "$2"',
      'sh',
      text,
      file,
    ]);
    expect(wrote.exitCode, wrote.stderr).to.equal(0);
  }
  async function commitAll(message: string): Promise<void> {
    const git = (...args: string[]) =>
      manager.run('git', [
        '-C',
        lab.repo,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@e.invalid',
        ...args,
      ]);
    expect((await git('commit', '-qam', message)).exitCode).to.equal(0);
  }
  async function runtimeItems(): Promise<
    Map<string, { state: string; detail?: string; path?: string }>
  > {
    const drift = await run(['drift', '--json']);
    const report = JSON.parse(drift.stdout) as DriftReport;
    return new Map(
      report.hosts.flatMap((h) =>
        h.items
          .filter((i) => i.layer === 'runtime' && i.domain === undefined)
          .map((i) => [h.host, i] as const),
      ),
    );
  }
  async function install(
    host: string,
    domain = 'transport-identity',
  ): Promise<{ run: FleetRun; receipt?: Receipt }> {
    const done = await run(['config', 'install', host, domain, '--confirm', '--json']);
    const body = JSON.parse(done.stdout || '{}') as { receipt?: unknown };
    return { run: done, ...(body.receipt ? { receipt: receiptSchema.parse(body.receipt) } : {}) };
  }

  before(async function () {
    manager = await requireSystemdUser(this);
    dir = manager.makeDir('lab-systemd');
    // Every controller inherits the failpoint; it fires only in one started with node-02-broken.
    const up = await manager.fleet(
      ['lab', 'up', '--supervisor', 'systemd-user', '--hosts', '2', '--dir', labDir(), '--json'],
      { cwd: dir, env: { FLEET_FAILPOINT: 'controller.start@node-02-broken:throw' } },
    );
    expect(up.exitCode, up.stderr + up.stdout).to.equal(0);
    lab = JSON.parse(up.stdout) as LabDocument;
    tokens = (JSON.parse(await readFile(lab.credentials, 'utf8')) as { hosts: typeof tokens })
      .hosts;
  });
  after(async () => {
    if (manager && dir) await manager.fleet(['lab', 'down', '--dir', labDir()], { cwd: dir });
  });

  it('runs each controller as a unit of the user manager, recorded by its node', async () => {
    for (const host of lab.hosts) {
      const recorded = await record(host.name);
      expect(recorded).to.deep.include({ supervisor: 'systemd-user' });
      expect(recorded.name).to.match(new RegExp(`^fleet-lab-[0-9a-f]{8}-${host.name}\\.service$`));
      const shown = await manager.show(recorded.name, [
        'ActiveState',
        'MainPID',
        'UnitFileState',
        'FragmentPath',
      ]);
      expect(shown).to.deep.include({ ActiveState: 'active', UnitFileState: 'enabled' });
      expect(Number(shown['MainPID'])).to.equal(host.pid);
      // The unit file stays in the node's home, linked into the manager's search path.
      expect(shown['FragmentPath']).to.equal(
        join(manager.home, '.config/systemd/user', recorded.name),
      );
      const identity = await client(host.name).identity();
      expect(identity).to.include({ nodeId: host.name, pid: host.pid });
    }
  });

  it("drift reports each controller's unit as a runtime item, stale once its file changed without a daemon-reload", async () => {
    const before = await runtimeItems();
    for (const host of lab.hosts) {
      const unit = (await record(host.name)).name;
      expect(before.get(host.name), host.name).to.include({ state: 'current' });
      expect(before.get(host.name)?.path).to.contain(unit);
    }
    const file = join(home('node-02'), '.config/systemd/user', (await record('node-02')).name);
    const original = await readFile(file, 'utf8');
    await writeAsUser(file, `${original}# edited by hand\n`);
    try {
      const after = await runtimeItems();
      expect(after.get('node-02')).to.include({ state: 'stale' });
      expect(after.get('node-02')?.detail).to.contain('NeedDaemonReload=yes');
      expect(after.get('node-01')).to.include({ state: 'current' });
    } finally {
      await writeAsUser(file, original);
      await manager.systemctl('daemon-reload');
    }
  });

  it("fleet version reports a controller unit changed without a daemon-reload as a stale supervisor item (exit 1), a stopped one's host unreachable", async () => {
    const version = async () => {
      const ran = await run(['version', '--json']);
      const report = JSON.parse(ran.stdout) as VersionReport;
      const supervisor = (host: string) =>
        report.hosts.find((h) => h.host === host)?.items.find((i) => i.kind === 'supervisor');
      return { ran, report, supervisor };
    };
    const before = await version();
    expect(before.supervisor('node-01'), before.ran.stderr).to.include({
      state: 'current',
      layer: 'runtime',
      name: 'systemd-user.unit',
    });
    const unit = (await record('node-02')).name;
    // A unit file changed without a daemon-reload: what runs is not what the file says.
    const file = join(home('node-02'), '.config/systemd/user', unit);
    const original = await readFile(file, 'utf8');
    await writeAsUser(file, `${original}# edited by hand\n`);
    try {
      const edited = await version();
      expect(edited.ran.exitCode, edited.ran.stderr).to.equal(1);
      expect(edited.supervisor('node-02')).to.include({ state: 'stale' });
      expect(edited.supervisor('node-02')?.detail).to.contain('NeedDaemonReload=yes');
      expect(edited.supervisor('node-02')?.path).to.contain(unit);
      expect(edited.supervisor('node-01')).to.include({ state: 'current' });
      expect(edited.report.hosts.find((h) => h.host === 'node-02')?.status).to.equal('drifted');
    } finally {
      await writeAsUser(file, original);
      await manager.systemctl('daemon-reload');
    }
    const pid = Number((await manager.show(unit, ['MainPID']))['MainPID']);
    expect((await manager.systemctl('stop', unit)).exitCode).to.equal(0);
    try {
      // A stopped controller answers nothing: its host is unreachable (exit 5), never current.
      const stopped = await version();
      expect(stopped.ran.exitCode, stopped.ran.stderr).to.equal(5);
      expect(stopped.report.hosts.find((h) => h.host === 'node-02')?.status).to.equal(
        'unreachable',
      );
    } finally {
      expect((await manager.systemctl('start', unit)).exitCode).to.equal(0);
      await waitFor(
        async () =>
          (await client('node-02')
            .identity()
            .catch(() => null)) !== null,
        60_000,
        'node-02 to answer again',
      );
    }
    expect(Number((await manager.show(unit, ['MainPID']))['MainPID'])).to.not.equal(pid);
    expect((await version()).supervisor('node-02')).to.include({ state: 'current' });
  });

  it("runs the node policy's router reload: a real systemctl --user reload of a real unit, after the write", async () => {
    const node = home('node-01');
    const routerUnit = `fleet-test-router-${lab.hosts[0]?.pid ?? 0}.service`;
    const loaded = join(node, 'router-loaded.yaml');
    // A router that re-reads its config on reload: it copies the file it would load.
    const started = await manager.run('systemd-run', [
      '--user',
      `--unit=${routerUnit}`,
      '--collect',
      '--quiet',
      `--property=ExecReload=/bin/cp ${node}/.config/router/router.yaml ${loaded}`,
      '--',
      '/bin/sleep',
      'infinity',
    ]);
    expect(started.exitCode, started.stderr).to.equal(0);
    try {
      const systemctl = (await manager.run('sh', ['-c', 'command -v systemctl'])).stdout.trim();
      const policyFile = nodePolicyFile(node);
      const { policy } = await readNodePolicyFile(policyFile, node, { uid: manager.uid });
      await writeAsUser(
        policyFile,
        formatNodePolicy({
          ...policy,
          domains: {
            ...policy.domains,
            router: {
              ...policy.domains['router'],
              actions: { 'router-reload': { argv: [systemctl, '--user', 'reload', routerUnit] } },
            },
          },
        }),
      );
      const manifest = join(lab.repo, 'fleet.yaml');
      await writeAsUser(
        manifest,
        (await readFile(manifest, 'utf8')).replace(
          '  router: { unattended: deny }',
          '  router: { unattended: deny, reload: router-reload }',
        ),
      );
      const routerFile = join(lab.repo, 'domains/router/router.yaml');
      const desired = `${await readFile(routerFile, 'utf8')}# reloaded by systemd\n`;
      await writeAsUser(routerFile, desired);
      await commitAll('router: reload through the node policy');

      const { run: done, receipt } = await install('node-01', 'router');
      expect(done.exitCode, done.stdout + done.stderr).to.equal(0);
      expect(receipt?.actions.find((a) => a.kind === 'reload')).to.include({ status: 'ok' });
      const live = await readFile(join(node, '.config/router/router.yaml'), 'utf8');
      expect(live).to.contain('# reloaded by systemd');
      // systemd ran the unit's ExecReload after the write: it loaded the new file.
      expect(await readFile(loaded, 'utf8')).to.equal(live);
    } finally {
      await manager.systemctl('stop', routerUnit);
    }
  });

  it('changes a node id: the unit ExecStart and the running controller carry the new id', async () => {
    const before = await client('node-01').identity();
    await commitNodeId('node-01', 'node-01-renamed');
    const { run: done, receipt } = await install('node-01');
    expect(done.exitCode, done.stdout + done.stderr).to.equal(0);
    expect(receipt).to.include({ outcome: 'installed', verified: true, host: 'node-01-renamed' });
    expect(receipt?.actions.map((a) => [a.kind, a.status])).to.deep.equal([
      ['update-supervisor-flag', 'ok'],
      ['restart-controller', 'ok'],
      ['verify-node-id', 'ok'],
    ]);
    expect(await unitFile('node-01')).to.match(/^ExecStart=.* --node-id node-01-renamed( |$)/m);
    expect(await runningArgv('node-01')).to.include('node-01-renamed');
    const after = await client('node-01').identity();
    expect(after).to.include({ nodeId: 'node-01-renamed', nodeIdFlag: 'node-01-renamed' });
    expect(after.pid).to.not.equal(before.pid);
    expect(await readFile(join(home('node-01'), IDENTITY), 'utf8')).to.match(
      /^expected_node: node-01-renamed$/m,
    );
    // The switch ran as a transient unit of its own (the restart ended the old controller's
    // whole control group, and the switch lived on to verify and log the outcome). The install
    // returns once the new controller has settled the operation, which can be before the switch
    // has seen the restart through and logged it: wait for its line.
    const switchLog = join(home('node-01'), '.local/state/fleet/logs/transport-identity.log');
    await waitFor(
      async () => /"switched":true/.test(await readFile(switchLog, 'utf8')),
      30_000,
      'the switch to log its outcome',
    );
  });

  it('rolls a node id back when its controller cannot start: exit 6, the old ExecStart runs again', async () => {
    const before = await client('node-02').identity();
    const identityFile = await readFile(join(home('node-02'), IDENTITY), 'utf8').catch(() => null);
    await commitNodeId('node-02', 'node-02-broken');
    const { run: done, receipt } = await install('node-02');
    expect(done.exitCode, done.stdout + done.stderr).to.equal(6);
    expect(receipt).to.include({ outcome: 'rolled-back', verified: false, host: 'node-02' });
    expect(receipt?.error?.code).to.equal('VERIFICATION_FAILED');
    expect(await unitFile('node-02')).to.match(/^ExecStart=.* --node-id node-02( |$)/m);
    expect(await runningArgv('node-02')).to.include('node-02');
    const after = await client('node-02').identity();
    expect(after).to.include({ nodeId: 'node-02', nodeIdFlag: 'node-02' });
    expect(after.pid).to.not.equal(before.pid);
    expect(await readFile(join(home('node-02'), IDENTITY), 'utf8').catch(() => null)).to.equal(
      identityFile,
    );
  });

  it('lab down stops and removes every unit it installed', async () => {
    const units = await Promise.all(lab.hosts.map(async (h) => (await record(h.name)).name));
    const pids = await Promise.all(
      units.map(async (unit) => Number((await manager.show(unit, ['MainPID']))['MainPID'])),
    );
    const down = await manager.fleet(['lab', 'down', '--dir', labDir(), '--json'], { cwd: dir });
    expect(down.exitCode, down.stderr).to.equal(0);
    const result = JSON.parse(down.stdout) as { units: { unit: string }[] };
    expect(result.units.map((u) => u.unit).sort()).to.deep.equal([...units].sort());
    for (const unit of units) {
      expect((await manager.show(unit, ['LoadState']))['LoadState']).to.equal('not-found');
    }
    await waitFor(() => pids.every((pid) => !pidAlive(pid)), 10_000, 'the controllers to end');
    const listed = await manager.run('ls', ['-A', join(manager.home, '.config/systemd/user')]);
    expect(listed.stdout.split('\n').filter((n) => n.startsWith('fleet-lab-'))).to.deep.equal([]);
  });
});
