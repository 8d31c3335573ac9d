/**
 * The scheduled-report task's environment on Windows (docs/scheduled-reports.md; reliability
 * catalogue 60): Task Scheduler's Exec action has no environment and starts in the user's logon
 * environment, so `fleet schedule install` writes the variables as `report-run --env NAME=VALUE` arguments. The
 * generated task is registered and run by the testkit's fake `schtasks` — as strict as Task
 * Scheduler about the schema, the logon environment and the command line — and the process it
 * starts must get back exactly the argv the schedule meant: Windows paths with spaces, a trailing
 * backslash and a double quote, split by the rules programs use on Windows (CommandLineToArgvW,
 * "Parsing C command-line arguments", learn.microsoft.com/cpp/c-language/parsing-c-command-line-arguments).
 * A task Task Scheduler or CreateProcess would not take is refused before anything is written.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { schtasks } from '@fleet/testkit';
import { reportTaskXml, type ScheduleInput } from '../src/schedule/generate.js';

/** A program that writes the argv and environment it was started with, then exits. */
const DUMP = `require('node:fs').writeFileSync(process.env.HOME + '/seen.json', JSON.stringify({ argv: process.argv.slice(2), credentials: process.env.FLEET_CREDENTIALS ?? null }));`;

function usage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isFleetError(error), String(error)).to.equal(true);
    expect((error as { code: string }).code).to.equal('USAGE');
    return (error as Error).message;
  }
  throw new Error('expected a USAGE refusal');
}

describe('the scheduled-report task carries its environment on its command line (fake schtasks)', function () {
  this.timeout(30_000);
  let home: string;
  let repo: string;
  let script: string;
  const env = () => ({ HOME: home, PATH: process.env['PATH'] ?? '/usr/bin:/bin' });
  const input = (overrides: Partial<ScheduleInput> = {}): ScheduleInput => ({
    name: 'fleet-report-version',
    title: 'version',
    argv: [process.execPath, script, 'report-run', 'version', '--repo', repo],
    repo,
    everySeconds: 1800,
    readOnly: true,
    environment: {
      FLEET_CREDENTIALS: 'C:\\Users\\Ann Lee\\AppData\\Roaming\\fleet\\credentials.json',
      XDG_STATE_HOME: 'C:\\Users\\Ann Lee\\state dir\\',
      XDG_CONFIG_HOME: 'C:\\Users\\O"Brien\\config',
    },
    logDir: join(home, 'logs'),
    ...overrides,
  });

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-task-env-'));
    repo = join(home, 'fleet repo');
    await mkdir(repo);
    script = join(home, 'dump argv.js');
    await writeFile(script, DUMP);
  });
  afterEach(() => rm(home, { recursive: true, force: true, maxRetries: 5 }));

  it('gives the started program the exact argv, --env pairs included, and none of the caller’s environment', async () => {
    const task = reportTaskXml(input(), '2026-05-01T09:00:00');
    const file = join(home, 'task.xml');
    await writeFile(file, Buffer.from(`\ufeff${task.content}`, 'utf16le'));
    const created = await schtasks(['/Create', '/XML', file, '/TN', 'fleet-report-version'], env());
    expect(created.code, created.stderr).to.equal(0);
    const caller = { ...env(), FLEET_CREDENTIALS: '/caller/credentials.json' };
    expect((await schtasks(['/Run', '/TN', 'fleet-report-version'], caller)).code).to.equal(0);

    let seen = '';
    for (let i = 0; i < 400 && seen === ''; i += 1) {
      seen = await readFile(join(home, 'seen.json'), 'utf8').catch(() => '');
      if (seen === '') await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(JSON.parse(seen)).to.deep.equal({
      argv: [
        'report-run',
        'version',
        '--repo',
        repo,
        '--env',
        'FLEET_CREDENTIALS=C:\\Users\\Ann Lee\\AppData\\Roaming\\fleet\\credentials.json',
        '--env',
        'XDG_STATE_HOME=C:\\Users\\Ann Lee\\state dir\\',
        '--env',
        'XDG_CONFIG_HOME=C:\\Users\\O"Brien\\config',
      ],
      credentials: null,
    });
  });

  it('refuses a repository path Task Scheduler cannot take as a working directory (260)', () => {
    const deep = `C:\\${'r'.repeat(300)}`;
    expect(usage(() => reportTaskXml(input({ repo: deep }), '2026-05-01T09:00:00'))).to.match(
      /working directory has 303 characters; Task Scheduler takes a path of less than 260/,
    );
  });

  it('refuses a command line past the 32,767 characters CreateProcess takes', () => {
    const argv = [...input().argv, '--repo', `/${'x'.repeat(33_000)}`];
    expect(usage(() => reportTaskXml(input({ argv }), '2026-05-01T09:00:00'))).to.match(
      /the command line would have \d+ characters; Windows starts one of at most 32767/,
    );
  });
});
