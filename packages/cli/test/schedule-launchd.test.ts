/**
 * Scheduled runs on a Mac, proven against the testkit's fake `launchctl` (as strict as launchd:
 * its own environment for a job, no directory created for its log, the plist read at bootstrap):
 * `fleet schedule install harness reconcile --unattended --every 30m` — as the field report ran its
 * reconciler, every 30 minutes with RunAtLoad — installs a LaunchAgent whose first run happens at
 * load, with the credentials path the schedule names and never the caller's; an agent of the old
 * label scheme is migrated (the version collector reading these labels:
 * packages/controller/test/versions-launchd.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { FAKE_SUPERVISOR_BIN, SpawnProcessRunner } from '@fleet/testkit';
import { installSchedule, type ScheduleHost } from '@fleet/operator/schedule/io.js';
import { launchdPlist } from '@fleet/operator/schedule/generate.js';
import {
  classifyJob,
  jobArguments,
  parseEvery,
  scheduleName,
} from '@fleet/operator/schedule/model.js';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const uid = process.getuid?.() ?? 0;

describe('fleet schedule on macOS, under the fake launchctl', function () {
  if (process.platform !== 'linux') return;
  this.timeout(120_000);
  let dir: string;
  let home: string;
  let repo: string;
  let env: Record<string, string>;
  let runner: SpawnProcessRunner;
  const agents = () => join(home, 'Library', 'LaunchAgents');
  const launchctl = (...args: string[]) => spawnSync('launchctl', args, { encoding: 'utf8', env });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-schedule-mac-'));
    home = join(dir, 'home');
    repo = join(dir, 'my fleet');
    await mkdir(home);
    env = {
      HOME: home,
      PATH: [FAKE_SUPERVISOR_BIN, process.env['PATH'] ?? '/usr/bin:/bin'].join(delimiter),
      LANG: 'C.UTF-8',
      GIT_AUTHOR_NAME: 'op',
      GIT_AUTHOR_EMAIL: 'op@example.org',
      GIT_COMMITTER_NAME: 'op',
      GIT_COMMITTER_EMAIL: 'op@example.org',
    };
    runner = new SpawnProcessRunner(env, home);
    const init = spawnSync(process.execPath, [BIN, 'init', repo], { encoding: 'utf8', env });
    expect(init.status, init.stderr).to.equal(0);
    // §10.3: only a committed opt-in lets harness reconcile run unattended.
    const manifest = join(repo, 'fleet.yaml');
    const text = await readFile(manifest, 'utf8');
    await writeFile(manifest, text.replace(/(harness-policy:\n\s+unattended:) deny/, '$1 allow'));
    const commit = spawnSync('git', ['-C', repo, 'commit', '-q', '-am', 'allow unattended'], {
      encoding: 'utf8',
      env,
    });
    expect(commit.status, commit.stderr).to.equal(0);
  });
  after(async () => {
    for (const label of [
      'dev.fleet.report-harness-reconcile',
      'dev.fleet.schedule.harness-reconcile',
    ])
      launchctl('bootout', `gui/${uid}/${label}`);
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("runs harness reconcile --unattended every 30 minutes, first at load, with the schedule's credentials path", async () => {
    // An agent of the old label scheme, loaded: the install migrates it.
    const legacyPlist = join(agents(), 'dev.fleet.schedule.harness-reconcile.plist');
    await mkdir(agents(), { recursive: true });
    await writeFile(
      legacyPlist,
      launchdPlist({
        name: 'fleet-report-harness-reconcile',
        title: 'old',
        argv: ['/usr/bin/true'],
        repo,
        everySeconds: 3600,
        readOnly: false,
        environment: {},
        logDir: join(home, 'Library', 'Logs', 'fleet'),
      }).content.replace(
        /dev\.fleet\.report-harness-reconcile/g,
        'dev.fleet.schedule.harness-reconcile',
      ),
      { mode: 0o644 },
    );
    await mkdir(join(home, 'Library', 'Logs', 'fleet'), { recursive: true });
    expect(launchctl('bootstrap', `gui/${uid}`, legacyPlist).status).to.equal(0);
    await rm(join(home, 'Library', 'Logs'), { recursive: true });

    const job = classifyJob(['harness', 'reconcile'], true);
    const named = join(dir, 'schedule-credentials.json');
    const host: ScheduleHost = { platform: 'darwin', home, runner, uid, now: () => new Date() };
    const result = await installSchedule(
      host,
      {
        name: scheduleName(job),
        title: 'harness reconcile --unattended',
        argv: [process.execPath, BIN, ...jobArguments(job, repo)],
        repo,
        everySeconds: parseEvery('30m'),
        readOnly: false,
        environment: { FLEET_CREDENTIALS: named },
        logDir: join(home, 'Library', 'Logs', 'fleet'),
      },
      { ...env, FLEET_CREDENTIALS: join(dir, 'caller-credentials.json') },
    );
    expect(result.files).to.deep.equal([
      join(agents(), 'dev.fleet.report-harness-reconcile.plist'),
    ]);
    expect(existsSync(legacyPlist)).to.equal(false);
    expect(launchctl('print', `gui/${uid}/dev.fleet.schedule.harness-reconcile`).status).to.equal(
      113,
    );

    // RunAtLoad: the first run happens at the bootstrap; it logs in the repository's runs.log.
    let last = '';
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline && !last.includes('schedule-credentials')) {
      const log = await readFile(join(repo, 'reports', 'runs.log'), 'utf8').catch(() => '');
      last =
        log
          .trim()
          .split('\n')
          .filter((line) => line.split(' ')[1] === 'harness-reconcile')
          .at(-1) ?? '';
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(last).to.match(/^\S+Z harness-reconcile exit \d+ [A-Z_]+: .*schedule-credentials\.json/);
    expect(last).to.not.contain('caller-credentials');
    const printed = launchctl('print', `gui/${uid}/dev.fleet.report-harness-reconcile`);
    expect(printed.stdout).to.include('\trun interval = 1800 seconds\n');
    expect(printed.stdout).to.include(
      `\tstdout path = ${join(home, 'Library/Logs/fleet/dev.fleet.report-harness-reconcile.log')}\n`,
    );
  });
});
