/**
 * The real user manager the systemd suites run against (test/src/systemd-user.ts), and the two
 * facts of systemd that fleet's design rests on (docs/runtime-lifecycle.md, "The runner leaves
 * the cgroup"): a restart of a unit with the default `KillMode=control-group` ends every process
 * of the unit's control group — a `setsid` child of ExecStart included — while a process in a
 * transient unit of its own (`systemd-run --user`) outlives it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { pidAlive, waitFor } from '../src/fleet.js';
import { requireSystemdUser, type SystemdUser } from '../src/systemd-user.js';

describe('a real systemd --user manager for a dedicated test user', function () {
  this.timeout(120_000);
  let manager: SystemdUser;
  let dir: string;

  before(async function () {
    manager = await requireSystemdUser(this);
    dir = manager.makeDir('harness');
  });
  after(async () => {
    if (!manager) return;
    await manager.systemctl('stop', 'fleet-harness-probe.service', 'fleet-harness-escape.service');
    await manager.systemctl('disable', 'fleet-harness-probe.service');
    await manager.systemctl('daemon-reload');
  });

  it('runs as the unprivileged user, with its own runtime dir and delegated cgroup', async () => {
    expect(manager.uid).to.not.equal(0);
    const version = await manager.systemctl('show', '--property=Version');
    expect(version.exitCode, version.stderr).to.equal(0);
    expect(version.stdout).to.match(/^Version=\d+/);
    const cgroup = await manager.run('cat', [`/proc/${manager.managerPid}/cgroup`]);
    expect(cgroup.stdout).to.contain(
      `/user.slice/user-${manager.uid}.slice/user@${manager.uid}.service`,
    );
  });

  it('kills the whole control group on restart, but not a transient unit of its own', async () => {
    const pids = join(dir, 'pids');
    const unit = join(manager.home, '.config', 'systemd', 'user', 'fleet-harness-probe.service');
    await manager.run('mkdir', ['-p', join(manager.home, '.config', 'systemd', 'user')]);
    const escape = `systemd-run --user --unit fleet-harness-escape --collect --quiet -- sleep 300`;
    await writeFile(
      unit,
      [
        '[Service]',
        'Type=exec',
        // A detached child (its own session), a transient unit, then the main process.
        `ExecStart=/bin/sh -c 'setsid sleep 301 & echo $$! > ${pids}; ${escape}; exec sleep 302'`,
        '',
      ].join('\n'),
    );
    manager.chown(unit);
    expect((await manager.systemctl('daemon-reload')).exitCode).to.equal(0);
    const started = await manager.systemctl('start', 'fleet-harness-probe.service');
    expect(started.exitCode, started.stderr).to.equal(0);
    await waitFor(
      async () => (await manager.show('fleet-harness-escape.service', ['MainPID'])).MainPID !== '0',
      10_000,
      'the transient unit',
    );
    const detached = Number((await manager.run('cat', [pids])).stdout.trim());
    const escaped = Number(
      (await manager.show('fleet-harness-escape.service', ['MainPID'])).MainPID,
    );
    expect(pidAlive(detached)).to.equal(true);

    const restarted = await manager.systemctl('restart', 'fleet-harness-probe.service');
    expect(restarted.exitCode, restarted.stderr).to.equal(0);
    await waitFor(() => !pidAlive(detached), 10_000, 'the setsid child to be killed');
    expect(pidAlive(escaped), 'the transient unit outlives the restart').to.equal(true);
  });
});
