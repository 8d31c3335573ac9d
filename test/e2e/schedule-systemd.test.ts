/**
 * `fleet schedule` against a real `systemd --user` manager (docs/scheduled-reports.md;
 * test/src/systemd-user.ts): `schedule install drift` makes a real timer that fires — its period
 * shortened by the tests-only `FLEET_SCHEDULE_TEST_PERIOD_SECONDS`, since `--every` has a
 * 5-minute floor — and each run lands a dated report set in the repository and a line in
 * `reports/runs.log`; a failing run leaves its line there too, and `schedule list` shows the
 * manager's record of it (Result, ExecMainStatus); `schedule remove` leaves nothing.
 *
 * Everything runs as the harness's unprivileged user, with its own copy of the packed CLI. The
 * fleet's one host points at a port nothing listens on: drift reports it unreachable, and still
 * writes its report.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { waitFor } from '../src/fleet.js';
import { requireSystemdUser, type SystemdUser } from '../src/systemd-user.js';

const NAME = 'fleet-report-drift';

interface Listed {
  readonly name: string;
  readonly state: string;
  readonly detail: string | null;
  readonly lastRun: { result: string; exitStatus: number | null } | null;
  readonly lastLog: string | null;
}

describe('scheduled reports on a real systemd --user manager (a timer that fires)', function () {
  this.timeout(300_000);
  let manager: SystemdUser;
  let dir: string;
  let repo: string;
  let credentials: string;

  const fleet = (args: readonly string[], env: Record<string, string> = {}) =>
    manager.fleet(args, { cwd: dir, env: { FLEET_CREDENTIALS: credentials, ...env } });
  const asUser = async (command: string, args: readonly string[]) => {
    const done = await manager.run(command, args);
    expect(done.exitCode, `${command} ${args.join(' ')}: ${done.stderr}`).to.equal(0);
  };
  const write = (file: string, text: string) =>
    asUser('sh', ['-c', 'umask 077; printf %s "$1" > "$2"', 'sh', text, file]);
  const runsLog = async () =>
    (await readFile(join(repo, 'reports', 'runs.log'), 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => line !== '');
  const listed = async (): Promise<Listed | undefined> => {
    const list = await fleet(['schedule', 'list', '--json']);
    expect(list.exitCode, list.stderr).to.equal(0);
    return (JSON.parse(list.stdout) as { schedules: Listed[] }).schedules.find(
      (s) => s.name === NAME,
    );
  };

  before(async function () {
    manager = await requireSystemdUser(this);
    dir = manager.makeDir('schedule');
    repo = join(dir, 'repo');
    credentials = join(dir, 'credentials.json');
    const init = await manager.fleet(['init', repo, '--json'], { cwd: dir });
    expect(init.exitCode, init.stderr).to.equal(0);
    const manifest = join(repo, 'fleet.yaml');
    await write(
      manifest,
      (await readFile(manifest, 'utf8')).replace('http://127.0.0.1:7701', 'http://127.0.0.1:9'),
    );
    await asUser('git', [
      '-C',
      repo,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@e.invalid',
      'commit',
      '-qam',
      'node-01 at a port nothing listens on',
    ]);
    await write(
      credentials,
      JSON.stringify({ version: 1, hosts: { 'node-01': { token: 'x'.repeat(32) } } }),
    );
  });
  after(async () => {
    if (manager && dir && existsSync(join(manager.home, '.config/systemd/user', `${NAME}.timer`)))
      await fleet(['schedule', 'remove', NAME]);
  });

  it('installs a timer that fires: a dated report set in the repository, a line in runs.log', async () => {
    const installed = await fleet(['schedule', 'install', 'drift', '--repo', repo, '--json'], {
      FLEET_SCHEDULE_TEST_PERIOD_SECONDS: '2',
    });
    expect(installed.exitCode, installed.stderr + installed.stdout).to.equal(0);
    const timer = await readFile(
      join(manager.home, '.config/systemd/user', `${NAME}.timer`),
      'utf8',
    );
    expect(timer).to.match(/^OnUnitActiveSec=2s$/m);
    const unit = await readFile(
      join(manager.home, '.config/systemd/user', `${NAME}.service`),
      'utf8',
    );
    expect(unit).to.contain(`Environment=FLEET_CREDENTIALS=${credentials}`);
    expect(unit).not.to.contain('x'.repeat(32));

    // Nobody starts it: the manager's timer does.
    await waitFor(async () => (await runsLog()).length > 0, 120_000, 'the timer to fire').catch(
      async (error: Error) => {
        const state = await manager.show(`${NAME}.timer`, [
          'ActiveState',
          'NextElapseUSecMonotonic',
          'LastTriggerUSec',
        ]);
        const service = await manager.show(`${NAME}.service`, [
          'Result',
          'ExecMainStatus',
          'ActiveState',
        ]);
        throw new Error(
          `${error.message}: timer ${JSON.stringify(state)}, service ${JSON.stringify(service)}`,
        );
      },
    );
    const [first] = await runsLog();
    expect(first).to.match(/^\d{4}-\d\d-\d\dT\S+Z drift exit \d+ /);
    const day = first?.slice(0, 10) as string;
    const reports = join(repo, 'reports', 'drift', day);
    expect(first).to.contain(reports);
    await waitFor(() => existsSync(join(reports, 'drift.json')), 30_000, 'the report set');
    expect((await readdir(reports)).sort()).to.include.members([
      'drift.html',
      'drift.json',
      'drift.md',
    ]);
    const report = JSON.parse(await readFile(join(reports, 'drift.json'), 'utf8')) as {
      hosts: { host: string; status: string }[];
    };
    expect(report.hosts.map((h) => [h.host, h.status])).to.deep.equal([['node-01', 'unreachable']]);
    await waitFor(async () => (await listed())?.lastRun !== null, 30_000, 'a recorded run');
    expect(await listed()).to.include({ state: 'installed', detail: null });
  });

  it('a failing run leaves a line the operator finds, and list shows what the manager recorded', async () => {
    // Committed: drift reads fleet.yaml as committed at HEAD (docs/classification.md).
    await write(join(repo, 'fleet.yaml'), 'apiVersion: fleet/v1\nhosts: [\n');
    await asUser('git', [
      '-C',
      repo,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@e.invalid',
      'commit',
      '-qam',
      'a fleet.yaml that does not parse',
    ]);
    await waitFor(
      async () => (await runsLog()).some((line) => line.includes('FLEET_YAML_INVALID')),
      120_000,
      'a failing run to log its line',
    );
    const failed = (await runsLog()).find((line) => line.includes('FLEET_YAML_INVALID'));
    expect(failed).to.match(/ drift exit 2 FLEET_YAML_INVALID: /);
    // The manager resets a service's Result when it starts it again (every 2 s here): the timer
    // is stopped, and the last run left to end, before its record is read.
    await manager.systemctl('stop', `${NAME}.timer`);
    await waitFor(
      async () =>
        (await manager.show(`${NAME}.service`, ['ActiveState']))['ActiveState'] !== 'activating',
      60_000,
      'the last run to end',
    );
    const schedule = await listed();
    expect(schedule?.lastRun).to.include({ result: 'exit-code', exitStatus: 2 });
    // A stopped timer never fires: list says so.
    expect(schedule?.state).to.equal('half-installed');
    expect(schedule?.detail).to.match(/never fires: reinstall it/);
    expect(schedule?.lastLog).to.contain('FLEET_YAML_INVALID');
    const text = await fleet(['schedule', 'list']);
    expect(text.stdout).to.match(/last run: exit-code, exit 2/);
  });

  it('schedule remove leaves nothing: no unit files, nothing loaded in the manager', async () => {
    const removed = await fleet(['schedule', 'remove', NAME, '--json']);
    expect(removed.exitCode, removed.stderr).to.equal(0);
    for (const suffix of ['timer', 'service']) {
      expect(existsSync(join(manager.home, '.config/systemd/user', `${NAME}.${suffix}`))).to.equal(
        false,
      );
    }
    expect((await manager.show(`${NAME}.timer`, ['LoadState']))['LoadState']).to.equal('not-found');
    expect(await listed()).to.equal(undefined);
  });
});
