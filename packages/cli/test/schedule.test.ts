/**
 * `fleet schedule install|list|remove` (contract §7, §1 principle 2, §10.3): the pure generation of
 * every platform's definition (escaping of paths with spaces, `systemd-analyze verify`, well-formed
 * plist and task XML), the refusal table through the real binary, and an integration run with the
 * testkit's fake `systemctl` first on PATH and a temp HOME.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import {
  FAKE_SUPERVISOR_BIN,
  parseExecStart,
  parseUnitFile,
  parseXml,
  requireSystemTools,
  splitWindowsArguments,
  SYSTEM_TOOLS,
  unitValue,
  unitValues,
  xmlChild,
  xmlText,
  type XmlElement,
} from '@fleet/testkit';
import {
  launchdPlist,
  localStartBoundary,
  PLIST_DOCTYPE,
  reportTaskXml,
  systemdTimerFiles,
  taskInterval,
  type ScheduleInput,
} from '@fleet/operator/schedule/generate.js';
import {
  classifyJob,
  formatEvery,
  jobArguments,
  normaliseName,
  parseEvery,
} from '@fleet/operator/schedule/model.js';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const REPO = '/home/al ice/my fleet repo';

const input = (overrides: Partial<ScheduleInput> = {}): ScheduleInput => ({
  name: 'fleet-report-drift',
  title: 'drift',
  argv: [process.execPath, '/opt/fleet cli/bin/run.js', ...jobArguments(driftJob, REPO)],
  repo: REPO,
  everySeconds: 3600,
  readOnly: true,
  environment: { FLEET_CREDENTIALS: '/home/al ice/.config/fleet/credentials.json' },
  logDir: '/home/al ice/Library/Logs/fleet',
  ...overrides,
});
const driftJob = classifyJob(['drift'], false);

function refusedCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isFleetError(error)) return `${error.code}/${error.exitCode}`;
    throw error;
  }
  return 'ok';
}

describe('fleet schedule: model', () => {
  it('parses durations like 30m, 6h, 1d, with a 5m minimum', () => {
    expect(parseEvery('5m')).to.equal(300);
    expect(parseEvery('30m')).to.equal(1800);
    expect(parseEvery('90min')).to.equal(5400);
    expect(parseEvery('6h')).to.equal(21_600);
    expect(parseEvery('1d')).to.equal(86_400);
    for (const bad of ['4m', '0m', '1', 'h', '1.5h', '-1h', '1w', '32d', '10s', ''])
      expect(
        refusedCode(() => parseEvery(bad)),
        bad,
      ).to.equal('USAGE/2');
    expect([300, 3600, 86_400, 5400].map(formatEvery)).to.deep.equal(['5m', '1h', '1d', '90m']);
  });

  it('schedules only drift and version; every writing verb is refused with exit 7', () => {
    const table: [string[], boolean, string][] = [
      [['drift'], false, 'ok'],
      [['version'], false, 'ok'],
      [['config', 'install'], false, 'UNATTENDED_REFUSED/7'],
      [['config', 'adopt'], false, 'UNATTENDED_REFUSED/7'],
      [['adopt'], false, 'UNATTENDED_REFUSED/7'],
      [['upgrade'], false, 'UNATTENDED_REFUSED/7'],
      [['bootstrap', 'apply'], false, 'UNATTENDED_REFUSED/7'],
      [['harness', 'reconcile'], false, 'UNATTENDED_REFUSED/7'],
      [['harness', 'reconcile'], true, 'ok'],
      [['config', 'install'], true, 'UNATTENDED_REFUSED/7'],
      [['drift'], true, 'USAGE/2'],
    ];
    for (const [words, unattended, expected] of table) {
      expect(
        refusedCode(() => classifyJob(words, unattended)),
        words.join(' '),
      ).to.equal(expected);
    }
    expect(jobArguments(classifyJob(['version'], false), '/r')).to.deep.equal([
      'report-run',
      'version',
      '--repo',
      '/r',
    ]);
    // The reconcile too runs through report-run, which logs every run (refused ones included).
    expect(jobArguments(classifyJob(['harness', 'reconcile'], true), '/r')).to.deep.equal([
      'report-run',
      'harness-reconcile',
      '--repo',
      '/r',
    ]);
  });

  it('names schedules fleet-report-<verb> and refuses other names', () => {
    expect(normaliseName('drift')).to.equal('fleet-report-drift');
    expect(normaliseName('fleet-report-version')).to.equal('fleet-report-version');
    for (const bad of ['../x', 'fleet-controller.service', 'Drift', 'a b'])
      expect(
        refusedCode(() => normaliseName(bad)),
        bad,
      ).to.equal('USAGE/2');
  });
});

describe('fleet schedule: systemd user timer generation', () => {
  it('writes a oneshot service and a persistent timer under ~/.config/systemd/user', () => {
    const [service, timer] = systemdTimerFiles(input());
    expect(service?.path).to.equal('~/.config/systemd/user/fleet-report-drift.service');
    expect(timer?.path).to.equal('~/.config/systemd/user/fleet-report-drift.timer');
    const s = parseUnitFile(service?.content ?? '');
    expect(unitValue(s, 'Service', 'Type')).to.equal('oneshot');
    expect(unitValue(s, 'Service', 'WorkingDirectory')).to.equal(REPO);
    const t = parseUnitFile(timer?.content ?? '');
    expect(unitValue(t, 'Timer', 'OnUnitActiveSec')).to.equal('1h');
    expect(unitValue(t, 'Timer', 'OnBootSec')).to.equal('5min');
    expect(unitValue(t, 'Timer', 'Persistent')).to.equal('true');
    expect(unitValue(t, 'Timer', 'Unit')).to.equal('fleet-report-drift.service');
    expect(unitValue(t, 'Install', 'WantedBy')).to.equal('timers.target');
    expect(
      unitValue(
        parseUnitFile(systemdTimerFiles(input({ everySeconds: 1800 }))[1]?.content ?? ''),
        'Timer',
        'OnUnitActiveSec',
      ),
    ).to.equal('30min');
  });

  it('quotes paths with spaces, %, $ and quotes so the exact argv comes back', () => {
    const argv = [
      process.execPath,
      '/opt/my fleet/bin/run.js',
      'report-run',
      'drift',
      '--repo',
      '/srv/100% "fleet" $HOME',
    ];
    const [service] = systemdTimerFiles(input({ argv }));
    const execStart = unitValue(parseUnitFile(service?.content ?? ''), 'Service', 'ExecStart');
    expect(parseExecStart(execStart ?? '', {}, {})).to.deep.equal(argv);
  });

  it('carries the credentials path the run needs (never a token) and a header that tells the truth', () => {
    const [service, timer] = systemdTimerFiles(input());
    const parsed = parseUnitFile(service?.content ?? '');
    expect(unitValues(parsed, 'Service', 'Environment')).to.deep.equal([
      'NODE_ENV=production',
      '"FLEET_CREDENTIALS=/home/al ice/.config/fleet/credentials.json"',
    ]);
    expect(service?.content).to.match(/^# Read-only on every host/m);
    expect(unitValue(parseUnitFile(timer?.content ?? ''), 'Timer', 'OnBootSec')).to.equal('5min');
    const [reconcile] = systemdTimerFiles(
      input({ readOnly: false, title: 'harness reconcile --unattended' }),
    );
    expect(reconcile?.content).to.match(/^# It WRITES to hosts/m);
    expect(reconcile?.content).not.to.contain('Read-only');
    // A value that is not an absolute path (a token pasted into the variable) is refused.
    expect(
      refusedCode(() =>
        systemdTimerFiles(input({ environment: { FLEET_CREDENTIALS: 'fleet_tok_abc' } })),
      ),
    ).to.equal('USAGE/2');
    expect(
      refusedCode(() => systemdTimerFiles(input({ environment: { FLEET_TOKEN: '/x' } }))),
    ).to.equal('USAGE/2');
  });

  it('runs every N seconds under the tests-only period override', () => {
    const [, timer] = systemdTimerFiles(input({ testPeriodSeconds: 3 }));
    const parsed = parseUnitFile(timer?.content ?? '');
    expect(unitValue(parsed, 'Timer', 'OnBootSec')).to.equal('3s');
    expect(unitValue(parsed, 'Timer', 'OnUnitActiveSec')).to.equal('3s');
  });

  it('refuses a relative node binary and line breaks', () => {
    expect(refusedCode(() => systemdTimerFiles(input({ argv: ['node', 'x'] })))).to.equal(
      'USAGE/2',
    );
    expect(refusedCode(() => systemdTimerFiles(input({ repo: '/a\nb' })))).to.equal('USAGE/2');
  });
});

describe('fleet schedule: systemd-analyze verify', function () {
  before(function () {
    requireSystemTools(
      this,
      [SYSTEM_TOOLS.systemdAnalyze],
      'generated units are checked with systemd-analyze verify',
    );
  });

  it('passes --user verification with no warning (repository path with spaces)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-schedule-verify-'));
    try {
      const runtime = join(dir, 'xdg-runtime');
      await mkdir(runtime, { mode: 0o700 });
      const repo = join(dir, 'my fleet repo');
      await mkdir(repo);
      const files = systemdTimerFiles(
        input({ repo, argv: [process.execPath, BIN, ...jobArguments(driftJob, repo)] }),
      );
      const paths: string[] = [];
      for (const file of files) {
        const path = join(dir, file.path.split('/').pop() as string);
        await writeFile(path, file.content);
        paths.push(path);
      }
      const result = await run('systemd-analyze', ['--user', 'verify', '--man=no', ...paths], {
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', XDG_RUNTIME_DIR: runtime, HOME: dir },
      }).then(
        ({ stderr }) => ({ code: 0, stderr }),
        (error: { code?: number; stderr?: string }) => ({
          code: error.code ?? -1,
          stderr: error.stderr ?? '',
        }),
      );
      expect(result, result.stderr).to.deep.equal({ code: 0, stderr: '' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('fleet schedule: launchd agent plist', () => {
  it('is well-formed XML with the plist DOCTYPE, Label, ProgramArguments and StartInterval', () => {
    const argv = [
      process.execPath,
      '/opt/my <fleet> & co/run.js',
      'report-run',
      'drift',
      '--repo',
      REPO,
    ];
    const plist = launchdPlist(input({ argv, everySeconds: 21_600 }));
    expect(plist.path).to.equal('~/Library/LaunchAgents/dev.fleet.report-drift.plist');
    const lines = plist.content.split('\n');
    expect(lines[0]).to.equal('<?xml version="1.0" encoding="UTF-8"?>');
    expect(lines[1]).to.equal(PLIST_DOCTYPE);
    // The strict parser takes no DOCTYPE: the exact Apple one is checked above, then removed.
    const { root } = parseXml(lines.filter((_, i) => i !== 1).join('\n'));
    expect(root.name).to.equal('plist');
    expect(root.attributes['version']).to.equal('1.0');
    const dict = xmlChild(root, 'dict') as XmlElement;
    // A plist dict alternates <key> and a value.
    const entries = new Map<string, XmlElement>();
    for (let i = 0; i < dict.children.length; i += 2) {
      const key = dict.children[i] as XmlElement;
      expect(key.name).to.equal('key');
      entries.set(key.text, dict.children[i + 1] as XmlElement);
    }
    expect(entries.get('Label')?.text).to.equal('dev.fleet.report-drift');
    expect(entries.get('ProgramArguments')?.children.map((c) => c.text)).to.deep.equal(argv);
    expect(entries.get('StartInterval')?.name).to.equal('integer');
    expect(entries.get('StartInterval')?.text).to.equal('21600');
    expect(entries.get('WorkingDirectory')?.text).to.equal(REPO);
    expect(entries.get('RunAtLoad')?.name).to.equal('true');
    const log = '/home/al ice/Library/Logs/fleet/dev.fleet.report-drift.log';
    expect(entries.get('StandardOutPath')?.text).to.equal(log);
    expect(entries.get('StandardErrorPath')?.text).to.equal(log);
    expect(entries.get('EnvironmentVariables')?.children.map((c) => c.text)).to.deep.equal([
      'NODE_ENV',
      'production',
      'FLEET_CREDENTIALS',
      '/home/al ice/.config/fleet/credentials.json',
    ]);
  });
});

describe('fleet schedule: Task Scheduler XML', () => {
  it('is well-formed, carries the required elements and a repeating TimeTrigger', () => {
    const argv = [
      'C:\\Program Files\\nodejs\\node.exe',
      'C:\\fleet cli\\run.js',
      'report-run',
      'drift',
      '--repo',
      'C:\\my "fleet"\\',
    ];
    const environment = { FLEET_CREDENTIALS: 'C:\\Users\\al ice\\fleet\\credentials.json' };
    const task = reportTaskXml(
      input({ argv, repo: 'C:\\my fleet', everySeconds: 1800, environment }),
      '2026-05-01T09:00:00',
    );
    expect(task.path).to.equal('~/AppData/Local/fleet/schedule/fleet-report-drift.xml');
    expect(task.encoding).to.equal('utf16le');
    const { declaration, root } = parseXml(task.content);
    expect(declaration?.['encoding']).to.equal('UTF-16');
    expect(root.name).to.equal('Task');
    expect(root.attributes['xmlns']).to.equal(
      'http://schemas.microsoft.com/windows/2004/02/mit/task',
    );
    expect(root.attributes['version']).to.equal('1.2');
    for (const name of ['RegistrationInfo', 'Triggers', 'Principals', 'Settings', 'Actions'])
      expect(xmlChild(root, name), name).to.not.equal(undefined);
    expect(xmlText(root, 'Triggers', 'TimeTrigger', 'StartBoundary')).to.equal(
      '2026-05-01T09:00:00',
    );
    expect(xmlText(root, 'Triggers', 'TimeTrigger', 'Repetition', 'Interval')).to.equal('PT30M');
    expect(xmlText(root, 'Principals', 'Principal', 'LogonType')).to.equal('InteractiveToken');
    expect(xmlText(root, 'Settings', 'StartWhenAvailable')).to.equal('true');
    expect(xmlText(root, 'RegistrationInfo', 'URI')).to.equal('\\fleet-report-drift');
    const exec = xmlChild(xmlChild(root, 'Actions'), 'Exec');
    expect(xmlText(exec, 'Command')).to.equal(argv[0]);
    // No environment element exists: the variables ride on report-run's command line.
    expect(splitWindowsArguments(xmlText(exec, 'Arguments') ?? '')).to.deep.equal([
      ...argv.slice(1),
      '--env',
      `FLEET_CREDENTIALS=${environment.FLEET_CREDENTIALS}`,
    ]);
    expect(exec?.children.map((c) => c.name)).to.deep.equal([
      'Command',
      'Arguments',
      'WorkingDirectory',
    ]);
    expect(xmlText(exec, 'WorkingDirectory')).to.equal('C:\\my fleet');
  });

  it('formats intervals and start boundaries, and refuses % (Task Scheduler expands it)', () => {
    expect([300, 3600, 86_400, 5400].map(taskInterval)).to.deep.equal([
      'PT5M',
      'PT1H',
      'P1D',
      'PT90M',
    ]);
    expect(localStartBoundary(new Date(2026, 4, 1, 9, 0, 30))).to.equal('2026-05-01T09:01:00');
    expect(
      refusedCode(() =>
        reportTaskXml(input({ argv: ['node.exe', '100%'] }), '2026-05-01T09:00:00'),
      ),
    ).to.equal('USAGE/2');
  });
});

// ---- through the real binary -------------------------------------------------------------------

interface Seat {
  readonly dir: string;
  readonly home: string;
  readonly repo: string;
  readonly env: NodeJS.ProcessEnv;
}

async function newSeat(): Promise<Seat> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-schedule-'));
  const home = join(dir, 'home');
  const repo = join(dir, 'my fleet');
  await mkdir(home);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('FLEET_') || key.startsWith('XDG_')) continue;
    env[key] = value;
  }
  Object.assign(env, {
    HOME: home,
    PATH: [FAKE_SUPERVISOR_BIN, process.env['PATH'] ?? '/usr/bin:/bin'].join(delimiter),
    GIT_AUTHOR_NAME: 'op',
    GIT_AUTHOR_EMAIL: 'op@example.org',
    GIT_COMMITTER_NAME: 'op',
    GIT_COMMITTER_EMAIL: 'op@example.org',
  });
  const seat = { dir, home, repo, env };
  const init = fleet(seat, ['init', repo]);
  expect(init.status, init.stderr).to.equal(0);
  return seat;
}

function fleet(
  seat: Seat,
  args: string[],
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: seat.env,
    cwd: seat.dir,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const unitDir = (seat: Seat) => join(seat.home, '.config', 'systemd', 'user');
const calls = async (seat: Seat): Promise<string[][]> =>
  (await readFile(join(seat.home, '.fleet-fake-supervisor', 'systemd', 'calls.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string[])
    .filter((argv) => argv[2] !== 'is-active'); // the test's own probes

describe('fleet schedule: refusals through the binary', function () {
  if (process.platform !== 'linux') return;
  // Each case runs the real CLI several times in a row (up to eight): on a loaded 2-core machine
  // that passes mocha's 20 s default. Nothing here depends on speed.
  this.timeout(90_000);
  let seat: Seat;
  before(async () => {
    seat = await newSeat();
  });
  // maxRetries: a fake task's monitor may still write its exit record while the tree goes.
  after(async () => rm(seat.dir, { recursive: true, force: true, maxRetries: 5 }));

  for (const words of [
    ['config', 'install'],
    ['config', 'adopt'],
    ['upgrade'],
    ['harness', 'reconcile'],
  ]) {
    it(`refuses ${words.join(' ')} with exit 7 and writes nothing`, () => {
      const result = fleet(seat, ['schedule', 'install', ...words, '--repo', seat.repo, '--json']);
      expect(result.status, result.stderr).to.equal(7);
      const error = (JSON.parse(result.stdout) as { error: { code: string } }).error;
      expect(error.code).to.equal('UNATTENDED_REFUSED');
      expect(existsSync(unitDir(seat))).to.equal(false);
    });
  }

  it('refuses harness reconcile --unattended without the opt-in at HEAD, allows it with', () => {
    const refused = fleet(seat, [
      'schedule',
      'install',
      'harness',
      'reconcile',
      '--unattended',
      '--repo',
      seat.repo,
    ]);
    expect(refused.status, refused.stderr).to.equal(7);
    expect(refused.stderr).to.contain('does not opt in');
    expect(existsSync(unitDir(seat))).to.equal(false);

    const manifest = join(seat.repo, 'fleet.yaml');
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-C', seat.repo, ...args], { encoding: 'utf8', env: seat.env });
      expect(r.status, r.stderr).to.equal(0);
    };
    const allow = spawnSync(
      process.execPath,
      [
        '-e',
        `const fs=require('fs');const p=process.argv[1];fs.writeFileSync(p,fs.readFileSync(p,'utf8').replace(/(harness-policy:\\n\\s+unattended:) deny/,'$1 allow'))`,
        manifest,
      ],
      { encoding: 'utf8' },
    );
    expect(allow.status, allow.stderr).to.equal(0);
    // Allowed in the working tree only: still refused (it needs a reviewed commit).
    const uncommitted = fleet(seat, [
      'schedule',
      'install',
      'harness',
      'reconcile',
      '--unattended',
      '--repo',
      seat.repo,
    ]);
    expect(uncommitted.status, uncommitted.stderr).to.equal(7);
    expect(uncommitted.stderr).to.contain('not committed');
    git('commit', '-q', '-am', 'allow unattended harness-policy');

    const allowed = fleet(seat, [
      'schedule',
      'install',
      'harness',
      'reconcile',
      '--unattended',
      '--repo',
      seat.repo,
      '--json',
    ]);
    expect(allowed.status, allowed.stderr).to.equal(0);
    const doc = JSON.parse(allowed.stdout) as { name: string; command: string[] };
    expect(doc.name).to.equal('fleet-report-harness-reconcile');
    expect(doc.command.slice(2)).to.deep.equal([
      'report-run',
      'harness-reconcile',
      '--repo',
      seat.repo,
    ]);
    expect(existsSync(join(unitDir(seat), 'fleet-report-harness-reconcile.timer'))).to.equal(true);
  });
});

describe('fleet schedule: install, list, remove with the fake systemctl', function () {
  if (process.platform !== 'linux') return;
  // Each case runs the real CLI several times in a row (up to eight): on a loaded 2-core machine
  // that passes mocha's 20 s default. Nothing here depends on speed.
  this.timeout(90_000);
  let seat: Seat;
  before(async () => {
    seat = await newSeat();
  });
  // maxRetries: a fake task's monitor may still write its exit record while the tree goes.
  after(async () => rm(seat.dir, { recursive: true, force: true, maxRetries: 5 }));

  it('installs drift every 1h, lists it, and removes it', async () => {
    const installed = fleet(seat, [
      'schedule',
      'install',
      'drift',
      '--every',
      '1h',
      '--repo',
      seat.repo,
      '--json',
    ]);
    expect(installed.status, installed.stderr).to.equal(0);
    const doc = JSON.parse(installed.stdout) as { name: string; every: string; command: string[] };
    expect(doc).to.include({ name: 'fleet-report-drift', every: '1h' });
    expect(doc.command).to.deep.equal([
      process.execPath,
      BIN,
      'report-run',
      'drift',
      '--repo',
      seat.repo,
    ]);

    const service = join(unitDir(seat), 'fleet-report-drift.service');
    const timer = join(unitDir(seat), 'fleet-report-drift.timer');
    const execStart = unitValue(
      parseUnitFile(await readFile(service, 'utf8')),
      'Service',
      'ExecStart',
    );
    expect(parseExecStart(execStart ?? '', {}, {})).to.deep.equal(doc.command);
    expect(
      unitValue(parseUnitFile(await readFile(timer, 'utf8')), 'Timer', 'OnUnitActiveSec'),
    ).to.equal('1h');
    const changes = async () => (await calls(seat)).filter((call) => call[2] !== 'show');
    expect(await changes()).to.deep.equal([
      ['systemctl', '--user', 'daemon-reload'],
      ['systemctl', '--user', 'enable', '--now', 'fleet-report-drift.timer'],
    ]);
    expect(
      unitValue(parseUnitFile(await readFile(service, 'utf8')), 'Service', 'Environment'),
    ).to.equal(`FLEET_CREDENTIALS=${join(seat.home, '.config/fleet/credentials.json')}`);
    const active = spawnSync('systemctl', ['--user', 'is-active', 'fleet-report-drift.timer'], {
      encoding: 'utf8',
      env: seat.env,
    });
    expect(active.stdout.trim(), active.stderr).to.equal('active');

    // Refused before anything is touched: under the minimum interval.
    expect(
      fleet(seat, ['schedule', 'install', 'version', '--every', '4m', '--repo', seat.repo]).status,
    ).to.equal(2);

    const listed = fleet(seat, ['schedule', 'list', '--json']);
    expect(listed.status, listed.stderr).to.equal(0);
    const list = JSON.parse(listed.stdout) as {
      schedules: { name: string; every: string; command: string[] }[];
    };
    expect(list.schedules.map((s) => [s.name, s.every])).to.deep.equal([
      ['fleet-report-drift', '1h'],
    ]);
    expect(list.schedules[0]?.command).to.deep.equal(doc.command);
    expect(list.schedules[0]).to.include({ state: 'installed', detail: null });
    expect(fleet(seat, ['schedule', 'list']).stdout).to.match(/fleet-report-drift +installed/);

    // A timer the manager no longer runs is half-installed, and says what to do.
    expect(
      spawnSync('systemctl', ['--user', 'disable', '--now', 'fleet-report-drift.timer'], {
        env: seat.env,
      }).status,
    ).to.equal(0);
    const half = JSON.parse(fleet(seat, ['schedule', 'list', '--json']).stdout) as {
      schedules: { state: string; detail: string }[];
    };
    expect(half.schedules[0]?.state).to.equal('half-installed');
    expect(half.schedules[0]?.detail).to.match(/never fires: reinstall it/);
    expect(
      spawnSync('systemctl', ['--user', 'enable', '--now', 'fleet-report-drift.timer'], {
        env: seat.env,
      }).status,
    ).to.equal(0);

    const removed = fleet(seat, ['schedule', 'remove', 'fleet-report-drift']);
    expect(removed.status, removed.stderr).to.equal(0);
    expect(existsSync(service)).to.equal(false);
    expect(existsSync(timer)).to.equal(false);
    expect((await changes()).slice(2)).to.deep.equal([
      ['systemctl', '--user', 'disable', '--now', 'fleet-report-drift.timer'],
      ['systemctl', '--user', 'enable', '--now', 'fleet-report-drift.timer'],
      ['systemctl', '--user', 'disable', '--now', 'fleet-report-drift.timer'],
      ['systemctl', '--user', 'daemon-reload'],
    ]);
    const inactive = spawnSync('systemctl', ['--user', 'is-active', 'fleet-report-drift.timer'], {
      encoding: 'utf8',
      env: seat.env,
    });
    expect(inactive.stdout.trim()).to.equal('inactive');
    const empty = JSON.parse(fleet(seat, ['schedule', 'list', '--json']).stdout) as {
      schedules: unknown[];
    };
    expect(empty.schedules).to.deep.equal([]);
    expect(fleet(seat, ['schedule', 'remove', 'drift']).status).to.equal(2);
  });

  it('leaves nothing behind when the user manager cannot be reached (no user bus)', () => {
    const result = spawnSync(
      process.execPath,
      [BIN, 'schedule', 'install', 'version', '--repo', seat.repo, '--json'],
      {
        encoding: 'utf8',
        env: { ...seat.env, FLEET_FAKE_SUPERVISOR_FAULTS: 'no-bus' },
        cwd: seat.dir,
      },
    );
    // Nothing changed: a precondition of the seat (exit 3), not a failed verification (6).
    expect(result.status, result.stderr).to.equal(3);
    const error = (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error;
    expect(error.code).to.equal('SUPERVISOR_FAILED');
    expect(error.message).to.match(/nothing was left installed \(2 files removed again\)$/);
    expect(existsSync(join(unitDir(seat), 'fleet-report-version.service'))).to.equal(false);
    expect(existsSync(join(unitDir(seat), 'fleet-report-version.timer'))).to.equal(false);
  });

  it('report-run leaves one line per run in reports/runs.log, a failing run too', async () => {
    const result = fleet(seat, ['report-run', 'version', '--repo', seat.repo]);
    const log = await readFile(join(seat.repo, 'reports', 'runs.log'), 'utf8');
    const lines = log.trim().split('\n');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z version exit ${result.status ?? '?'} `),
    );
  });

  it('a scheduled harness reconcile that is refused, or fails on its credentials, leaves a line in runs.log; schedule list shows the last', async () => {
    const runsLog = async () =>
      (await readFile(join(seat.repo, 'reports', 'runs.log'), 'utf8'))
        .trim()
        .split('\n')
        .filter((line) => line.split(' ')[1] === 'harness-reconcile');
    const reportRun = (credentials: string) =>
      spawnSync(process.execPath, [BIN, 'report-run', 'harness-reconcile', '--repo', seat.repo], {
        encoding: 'utf8',
        env: { ...seat.env, FLEET_CREDENTIALS: credentials },
        cwd: seat.dir,
      });
    const credentials = join(seat.dir, 'credentials.json');
    await writeFile(credentials, '{ "version": 1, "hosts": {} }\n', { mode: 0o600 });
    // fleet.yaml does not opt in: the run is refused (exit 7), and says so in the log.
    const refused = reportRun(credentials);
    expect(refused.status, refused.stderr).to.equal(7);
    expect((await runsLog()).at(-1)).to.match(
      /^\S+Z harness-reconcile exit 7 UNATTENDED_REFUSED: unattended reconcile refused: .*nothing was written$/,
    );

    const manifest = join(seat.repo, 'fleet.yaml');
    const text = await readFile(manifest, 'utf8');
    await writeFile(manifest, text.replace(/(harness-policy:\n\s+unattended:) deny/, '$1 allow'));
    const git = (...args: string[]) =>
      spawnSync('git', ['-C', seat.repo, ...args], { encoding: 'utf8', env: seat.env });
    expect(git('commit', '-q', '-am', 'allow unattended harness-policy').status).to.equal(0);
    const installed = fleet(seat, [
      'schedule',
      'install',
      'harness',
      'reconcile',
      '--unattended',
      '--repo',
      seat.repo,
      '--json',
    ]);
    expect(installed.status, installed.stderr).to.equal(0);
    try {
      // Opted in, but the credentials file it names is gone: the failure is logged, not lost.
      const noCredentials = reportRun(join(seat.dir, 'no-such-credentials.json'));
      expect(noCredentials.status, noCredentials.stderr).to.not.equal(0);
      const last = (await runsLog()).at(-1) ?? '';
      expect(last).to.match(
        new RegExp(
          `^\\S+Z harness-reconcile exit ${noCredentials.status} [A-Z_]+: .*no-such-credentials`,
        ),
      );
      const list = JSON.parse(fleet(seat, ['schedule', 'list', '--json']).stdout) as {
        schedules: { name: string; lastLog: string | null }[];
      };
      const reconcile = list.schedules.find((s) => s.name === 'fleet-report-harness-reconcile');
      expect(reconcile?.lastLog).to.equal(last);
      expect(fleet(seat, ['schedule', 'list']).stdout).to.contain(`last logged: ${last}`);
    } finally {
      expect(fleet(seat, ['schedule', 'remove', 'harness-reconcile']).status).to.equal(0);
      await writeFile(manifest, text);
      git('commit', '-q', '-am', 'back to deny');
    }
  });

  it("a Task Scheduler task carries the schedule's environment on its command line: the fake starts it without the caller's", async () => {
    // The generated task, registered and run by the fake schtasks (a logon environment: no
    // FLEET_* or XDG_* of the shell that ran /Run), reads the credentials file the schedule named.
    const named = join(seat.dir, 'task-credentials.json');
    const task = reportTaskXml(
      input({
        argv: [process.execPath, BIN, ...jobArguments(classifyJob(['version'], false), seat.repo)],
        repo: seat.repo,
        environment: { FLEET_CREDENTIALS: named },
      }),
      '2026-05-01T09:00:00',
    );
    const file = join(seat.dir, 'task.xml');
    await writeFile(file, Buffer.from(`\ufeff${task.content}`, 'utf16le'));
    const schtasks = (...args: string[]) =>
      spawnSync('schtasks', args, {
        encoding: 'utf8',
        env: { ...seat.env, FLEET_CREDENTIALS: join(seat.dir, 'caller-credentials.json') },
      });
    expect(schtasks('/Create', '/XML', file, '/TN', 'fleet-report-version').status).to.equal(0);
    expect(schtasks('/Run', '/TN', 'fleet-report-version').status).to.equal(0);
    let last = '';
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !last.includes('task-credentials')) {
      const log = await readFile(join(seat.repo, 'reports', 'runs.log'), 'utf8').catch(() => '');
      last = log.trim().split('\n').at(-1) ?? '';
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(last).to.match(
      / version exit 4 [A-Z_]+: no credentials file at .*task-credentials\.json/,
    );
    expect(last).to.not.contain('caller-credentials');
  });

  it('report-run --env takes only the schedule variables, as absolute paths (exit 2)', () => {
    for (const env of ['PATH=/usr/bin', 'FLEET_CREDENTIALS=relative.json', 'FLEET_CREDENTIALS']) {
      const result = fleet(seat, ['report-run', 'version', '--repo', seat.repo, '--env', env]);
      expect(result.status, env).to.equal(2);
    }
  });

  it('report-run refuses anything but drift, version and harness-reconcile (exit 7)', () => {
    const result = fleet(seat, ['report-run', 'config', '--repo', seat.repo]);
    expect(result.status, result.stderr).to.equal(7);
  });
});
