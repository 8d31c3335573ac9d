/**
 * `fleet schedule`'s pure model (contract §7, §10.3; docs/scheduled-reports.md), as tables: the
 * `--every` durations and their bounds, how an interval is written back (`fleet schedule list`,
 * systemd, Task Scheduler), the tests-only period variable, schedule names and launchd labels,
 * what `report-run` runs for each job, the `--env NAME=VALUE` flags a Task Scheduler task carries,
 * and where each platform's definition files go. No supervisor is asked anything.
 */
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { RecordedProcessRunner } from '@fleet/testkit';
import {
  parseEnvironmentFlags,
  taskInterval,
  type ScheduleInput,
} from '../src/schedule/generate.js';
import {
  definitionFiles,
  resolveHome,
  serviceRunning,
  type ScheduleHost,
} from '../src/schedule/io.js';
import {
  TEST_PERIOD_ENV,
  describeLastRun,
  jobOf,
  formatEvery,
  launchdLabel,
  normaliseName,
  parseEvery,
  reportRunCommand,
  testPeriodSeconds,
  type ReportRunJob,
} from '../src/schedule/model.js';

/** What a call gave: its value, or the fleet error it threw (code, exit code, message). */
type Outcome<T> =
  | { readonly value: T }
  | { readonly code: string; readonly exitCode: number; readonly message: string };

function outcome<T>(run: () => T): Outcome<T> {
  try {
    return { value: run() };
  } catch (error) {
    if (!isFleetError(error)) throw error;
    return { code: error.code, exitCode: error.exitCode, message: error.message };
  }
}

const usage = (message: string) => ({ code: 'USAGE', exitCode: 2, message });
const notDuration = (text: string) =>
  usage(
    `--every ${JSON.stringify(text)} is not a duration: use a whole number with m, h or d (30m, 6h, 1d)`,
  );

describe('fleet schedule: --every durations', () => {
  const cases: { text: string; expected: Outcome<number>; why: string }[] = [
    { text: '5m', expected: { value: 300 }, why: 'the minimum, exactly' },
    { text: '5min', expected: { value: 300 }, why: '`min` is `m`' },
    { text: '90min', expected: { value: 5400 }, why: 'minutes beyond an hour stay minutes' },
    { text: '6h', expected: { value: 21_600 }, why: 'hours' },
    { text: '1d', expected: { value: 86_400 }, why: 'the default' },
    { text: '31d', expected: { value: 2_678_400 }, why: 'the maximum, in days' },
    { text: '744h', expected: { value: 2_678_400 }, why: 'the maximum, in hours' },
    { text: '44640m', expected: { value: 2_678_400 }, why: 'the maximum, in minutes' },
    { text: ' 6h\n', expected: { value: 21_600 }, why: 'surrounding blanks are trimmed' },
    {
      text: '4m',
      expected: usage('--every 4m is shorter than the minimum of 5m'),
      why: 'one minute under the floor',
    },
    {
      text: '1min',
      expected: usage('--every 1min is shorter than the minimum of 5m'),
      why: 'under the floor, spelt min',
    },
    {
      text: '32d',
      expected: usage('--every 32d is longer than the maximum of 31d'),
      why: "past Task Scheduler's 31 days",
    },
    {
      text: '44641m',
      expected: usage('--every 44641m is longer than the maximum of 31d'),
      why: 'one minute past the maximum',
    },
    {
      text: '9999999m',
      expected: usage('--every 9999999m is longer than the maximum of 31d'),
      why: 'seven digits parse, and are too long',
    },
    { text: '0d', expected: notDuration('0d'), why: 'zero is not a whole positive number' },
    { text: '06h', expected: notDuration('06h'), why: 'a leading zero' },
    { text: '10000000m', expected: notDuration('10000000m'), why: 'eight digits' },
    { text: '1.5h', expected: notDuration('1.5h'), why: 'a fraction' },
    { text: '1D', expected: notDuration('1D'), why: 'units are lower case' },
    { text: '1 h', expected: notDuration('1 h'), why: 'a blank inside' },
    { text: '10s', expected: notDuration('10s'), why: 'no seconds unit' },
    { text: '1w', expected: notDuration('1w'), why: 'no weeks unit' },
    { text: '', expected: notDuration(''), why: 'empty' },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.text)}: ${c.why}`, () => {
      expect(outcome(() => parseEvery(c.text))).to.deep.equal(c.expected);
    });
  }
});

describe('fleet schedule: an interval written back (list / systemd, Task Scheduler)', () => {
  const cases: { seconds: number; every: string; task: string }[] = [
    { seconds: 300, every: '5m', task: 'PT5M' },
    { seconds: 5400, every: '90m', task: 'PT90M' },
    { seconds: 3600, every: '1h', task: 'PT1H' },
    { seconds: 90_000, every: '25h', task: 'PT25H' },
    { seconds: 86_400, every: '1d', task: 'P1D' },
    { seconds: 2_678_400, every: '31d', task: 'P31D' },
    // not from --every, which takes whole minutes: seconds are kept, Task Scheduler rounds up
    { seconds: 301, every: '301s', task: 'PT6M' },
  ];
  for (const c of cases) {
    it(`${c.seconds} s is ${c.every}, and ${c.task} for Task Scheduler`, () => {
      expect([formatEvery(c.seconds), taskInterval(c.seconds)]).to.deep.equal([c.every, c.task]);
    });
  }
});

describe(`fleet schedule: ${TEST_PERIOD_ENV} (tests only)`, () => {
  const refused = (text: string) =>
    usage(`${TEST_PERIOD_ENV}=${JSON.stringify(text)} is not a whole number of seconds`);
  const cases: { value: string | undefined; expected: Outcome<number | undefined> }[] = [
    { value: undefined, expected: { value: undefined } },
    { value: '', expected: { value: undefined } },
    { value: '1', expected: { value: 1 } },
    { value: '30', expected: { value: 30 } },
    { value: '999999', expected: { value: 999_999 } },
    { value: '1000000', expected: refused('1000000') },
    { value: '0', expected: refused('0') },
    { value: '01', expected: refused('01') },
    { value: ' 3', expected: refused(' 3') },
    { value: '1.5', expected: refused('1.5') },
    { value: '-1', expected: refused('-1') },
  ];
  for (const c of cases) {
    it(`${c.value === undefined ? 'unset' : JSON.stringify(c.value)}`, () => {
      const env = c.value === undefined ? {} : { [TEST_PERIOD_ENV]: c.value };
      expect(outcome(() => testPeriodSeconds(env))).to.deep.equal(c.expected);
    });
  }
});

describe('fleet schedule: names (as `fleet schedule list` prints them) and launchd labels', () => {
  const notName = (name: string) =>
    usage(
      `${JSON.stringify(name)} is not a fleet schedule name (fleet-report-<verb>, as \`fleet schedule list\` prints it)`,
    );
  const cases: { name: string; expected: Outcome<[string, string]> }[] = [
    { name: 'drift', expected: { value: ['fleet-report-drift', 'dev.fleet.report-drift'] } },
    {
      name: 'fleet-report-version',
      expected: { value: ['fleet-report-version', 'dev.fleet.report-version'] },
    },
    {
      name: 'harness-reconcile',
      expected: {
        value: ['fleet-report-harness-reconcile', 'dev.fleet.report-harness-reconcile'],
      },
    },
    { name: 'fleet-report-', expected: notName('fleet-report-') },
    { name: 'fleet-report-Drift', expected: notName('fleet-report-Drift') },
    { name: '-drift', expected: notName('-drift') },
    { name: 'drift2', expected: notName('drift2') },
    { name: '../drift', expected: notName('../drift') },
    { name: 'fleet-report-drift\n', expected: notName('fleet-report-drift\n') },
    { name: 'd'.repeat(42), expected: notName('d'.repeat(42)) },
  ];
  for (const c of cases) {
    it(JSON.stringify(c.name), () => {
      expect(
        outcome(() => {
          const full = normaliseName(c.name);
          return [full, launchdLabel(full)];
        }),
      ).to.deep.equal(c.expected);
    });
  }
});

describe('fleet schedule: what report-run runs for each job', () => {
  const cases: {
    job: ReportRunJob;
    reportDir: string | null;
    expected: Outcome<{ id: string; argv: string[] }>;
  }[] = [
    {
      job: 'drift',
      reportDir: '/r/reports/2026-05-01',
      expected: {
        value: { id: 'drift', argv: ['--repo', '/r', '--report-dir', '/r/reports/2026-05-01'] },
      },
    },
    {
      job: 'version',
      reportDir: '/r/reports/x',
      expected: {
        value: { id: 'version', argv: ['--repo', '/r', '--report-dir', '/r/reports/x'] },
      },
    },
    {
      job: 'harness-reconcile',
      reportDir: null,
      expected: { value: { id: 'harness:reconcile', argv: ['--unattended', '--repo', '/r'] } },
    },
    {
      job: 'harness-reconcile',
      reportDir: '/r/reports/x',
      expected: { value: { id: 'harness:reconcile', argv: ['--unattended', '--repo', '/r'] } },
    },
    {
      job: 'version',
      reportDir: null,
      expected: { code: 'INTERNAL', exitCode: 1, message: 'report-run version: no report folder' },
    },
  ];
  for (const c of cases) {
    it(`${c.job}, report folder ${c.reportDir ?? 'none'}`, () => {
      expect(outcome(() => reportRunCommand(c.job, '/r', c.reportDir))).to.deep.equal(c.expected);
    });
  }
});

describe('fleet schedule: report-run --env NAME=VALUE (a Task Scheduler task carries these)', () => {
  const refused = (message: string) => usage(`schedule: ${message}`);
  const allowed = 'FLEET_CREDENTIALS, XDG_CONFIG_HOME, XDG_STATE_HOME';
  const cases: { entries: string[]; expected: Outcome<Record<string, string>> }[] = [
    { entries: [], expected: { value: {} } },
    {
      entries: ['FLEET_CREDENTIALS=/home/al/.config/fleet/credentials.json'],
      expected: { value: { FLEET_CREDENTIALS: '/home/al/.config/fleet/credentials.json' } },
    },
    {
      entries: ['XDG_STATE_HOME=C:\\Users\\al\\state', 'XDG_CONFIG_HOME=\\\\srv\\share'],
      expected: {
        value: { XDG_STATE_HOME: 'C:\\Users\\al\\state', XDG_CONFIG_HOME: '\\\\srv\\share' },
      },
    },
    {
      entries: ['FLEET_CREDENTIALS=/a=b.json'],
      expected: { value: { FLEET_CREDENTIALS: '/a=b.json' } },
    },
    {
      entries: ['FLEET_CREDENTIALS=/first', 'FLEET_CREDENTIALS=/second'],
      expected: { value: { FLEET_CREDENTIALS: '/second' } },
    },
    {
      entries: ['FLEET_CREDENTIALS'],
      expected: refused('--env "FLEET_CREDENTIALS" is not NAME=VALUE'),
    },
    { entries: ['=/x'], expected: refused('--env "=/x" is not NAME=VALUE') },
    {
      entries: ['PATH=/usr/bin'],
      expected: refused(`PATH is not a variable a schedule carries (${allowed})`),
    },
    {
      entries: ['FLEET_TOKEN=/x'],
      expected: refused(`FLEET_TOKEN is not a variable a schedule carries (${allowed})`),
    },
    {
      entries: ['fleet_credentials=/x'],
      expected: refused(`fleet_credentials is not a variable a schedule carries (${allowed})`),
    },
    {
      entries: ['FLEET_CREDENTIALS=credentials.json'],
      expected: refused('FLEET_CREDENTIALS must be an absolute path, not "credentials.json"'),
    },
    {
      entries: ['FLEET_CREDENTIALS=~/c.json'],
      expected: refused('FLEET_CREDENTIALS must be an absolute path, not "~/c.json"'),
    },
    {
      entries: ['FLEET_CREDENTIALS=C:c.json'],
      expected: refused('FLEET_CREDENTIALS must be an absolute path, not "C:c.json"'),
    },
    {
      entries: ['FLEET_CREDENTIALS='],
      expected: refused('FLEET_CREDENTIALS must be an absolute path, not ""'),
    },
    {
      entries: ['FLEET_CREDENTIALS=/a\nb'],
      expected: refused('FLEET_CREDENTIALS must be an absolute path, not "/a\\nb"'),
    },
  ];
  for (const c of cases) {
    it(JSON.stringify(c.entries), () => {
      expect(outcome(() => parseEnvironmentFlags(c.entries))).to.deep.equal(c.expected);
    });
  }
});

describe("fleet schedule: each platform's definition files, and where they go", () => {
  const host = (platform: ScheduleHost['platform'], xdgConfigHome?: string): ScheduleHost => ({
    platform,
    home: '/home/al',
    ...(xdgConfigHome === undefined ? {} : { xdgConfigHome }),
    runner: new RecordedProcessRunner(),
    now: () => new Date(2026, 4, 1, 9, 0, 30),
  });
  const input: ScheduleInput = {
    name: 'fleet-report-drift',
    title: 'drift',
    argv: ['/usr/bin/node', '/opt/fleet/bin/run.js', 'report-run', 'drift', '--repo', '/r'],
    repo: '/r',
    everySeconds: 3600,
    readOnly: true,
    environment: {},
    logDir: '/home/al/Library/Logs/fleet',
  };
  const cases: { host: ScheduleHost; expected: [path: string, encoding: string][] }[] = [
    {
      host: host('linux'),
      expected: [
        ['/home/al/.config/systemd/user/fleet-report-drift.service', 'utf8'],
        ['/home/al/.config/systemd/user/fleet-report-drift.timer', 'utf8'],
      ],
    },
    {
      host: host('linux', '/xdg'),
      expected: [
        ['/xdg/systemd/user/fleet-report-drift.service', 'utf8'],
        ['/xdg/systemd/user/fleet-report-drift.timer', 'utf8'],
      ],
    },
    {
      host: host('darwin', '/xdg'),
      expected: [['/home/al/Library/LaunchAgents/dev.fleet.report-drift.plist', 'utf8']],
    },
    {
      host: host('win32'),
      expected: [['/home/al/AppData/Local/fleet/schedule/fleet-report-drift.xml', 'utf16le']],
    },
  ];
  for (const c of cases) {
    it(`${c.host.platform}${c.host.xdgConfigHome ? ` with XDG_CONFIG_HOME=${c.host.xdgConfigHome}` : ''}`, () => {
      expect(
        definitionFiles(c.host, input).map((file) => [
          resolveHome(c.host, file.path),
          file.encoding,
        ]),
      ).to.deep.equal(c.expected);
    });
  }

  it('an absolute path, and a sibling of ~/.config, are left alone', () => {
    expect(resolveHome(host('linux', '/xdg'), '/etc/x')).to.equal('/etc/x');
    expect(resolveHome(host('linux', '/xdg'), '~/.configX/a')).to.equal('/home/al/.configX/a');
  });
});

describe('fleet schedule list: the last run, for a person (issue 35)', () => {
  const at = 'Sat 2026-12-05 10:00:00 UTC';
  const end = 'Sat 2026-12-05 10:00:09 UTC';
  const cases: {
    why: string;
    run: { result: string; exitStatus: number | null; endedAt: string | null; running: boolean };
    job: string | undefined;
    line: string;
  }[] = [
    {
      why: 'the first run, still running: not the "success" the manager holds before any ended',
      run: { result: 'success', exitStatus: 0, endedAt: null, running: true },
      job: 'drift',
      line: `running, started ${at}`,
    },
    {
      why: 'a later run still running: not the previous run’s result',
      run: { result: 'exit-code', exitStatus: 1, endedAt: null, running: true },
      job: 'version',
      line: `running, started ${at}`,
    },
    {
      why: 'drift exit 1 is drift found, not a failure (contract §7)',
      run: { result: 'exit-code', exitStatus: 1, endedAt: end, running: false },
      job: 'drift',
      line: `drift found (exit 1), started ${at}, ended ${end}`,
    },
    {
      why: 'version exit 1 too',
      run: { result: 'exit-code', exitStatus: 1, endedAt: end, running: false },
      job: 'version',
      line: `drift found (exit 1), started ${at}, ended ${end}`,
    },
    {
      why: 'a reconcile exit 1 is what the manager says',
      run: { result: 'exit-code', exitStatus: 1, endedAt: end, running: false },
      job: 'harness-reconcile',
      line: `exit-code, exit 1, started ${at}, ended ${end}`,
    },
    {
      why: 'drift exit 5 (a host unreachable) is a failure as the manager says',
      run: { result: 'exit-code', exitStatus: 5, endedAt: end, running: false },
      job: 'drift',
      line: `exit-code, exit 5, started ${at}, ended ${end}`,
    },
    {
      why: 'a clean run',
      run: { result: 'success', exitStatus: 0, endedAt: end, running: false },
      job: 'drift',
      line: `success, exit 0, started ${at}, ended ${end}`,
    },
    {
      why: 'killed by a timeout',
      run: { result: 'timeout', exitStatus: null, endedAt: end, running: false },
      job: 'drift',
      line: `timeout, exit ?, started ${at}, ended ${end}`,
    },
  ];
  for (const { why, run, job, line } of cases) {
    it(why, () => {
      expect(describeLastRun({ ...run, startedAt: at }, job)).to.equal(line);
    });
  }

  const states: [active: string | undefined, sub: string | undefined, running: boolean][] = [
    ['activating', 'start', true], // a oneshot's whole run
    ['active', 'running', true],
    ['active', 'exited', false], // RemainAfterExit, after its run
    ['inactive', 'dead', false],
    ['failed', 'failed', false],
    [undefined, undefined, false],
  ];
  for (const [active, sub, running] of states) {
    it(`ActiveState ${active ?? '(none)'}, SubState ${sub ?? '(none)'}: ${running ? 'running' : 'not running'}`, () => {
      expect(serviceRunning(active, sub)).to.equal(running);
    });
  }

  it('names the job a schedule runs', () => {
    expect(
      jobOf(['/usr/bin/node', '/fleet/run.js', 'report-run', 'drift', '--repo', '/r']),
    ).to.equal('drift');
    expect(jobOf(['/usr/bin/node', '/fleet/run.js', 'drift'])).to.equal(undefined);
  });
});
