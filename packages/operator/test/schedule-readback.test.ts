/**
 * `fleet schedule list` reads back what `fleet schedule install` wrote (schedule/installed.ts),
 * pure: the command and interval of a launchd plist and of a Task Scheduler definition, as the
 * generators write them (quoting and escaping included; a task's variables as `--env`
 * arguments), and of definitions that name none.
 */
import { expect } from 'chai';
import { launchdPlist, reportTaskXml, type ScheduleInput } from '../src/schedule/generate.js';
import { launchdDefinition, taskDefinition } from '../src/schedule/installed.js';

const input = (argv: readonly string[]): ScheduleInput => ({
  name: 'fleet-report-version',
  title: 'version',
  argv,
  repo: '/home/ann/my fleet',
  everySeconds: 1800,
  readOnly: true,
  environment: { FLEET_CREDENTIALS: '/home/ann/.config/fleet/credentials.json' },
  logDir: '/home/ann/Library/Logs/fleet',
});

const COMMANDS: readonly (readonly string[])[] = [
  ['/usr/bin/node', '/opt/fleet/bin/run.js', 'report-run', 'version', '--repo', '/home/ann/fleet'],
  ['/usr/bin/node', '/opt/fleet & co/run.js', 'report-run', 'drift', '--repo', '/a <b> "c"'],
];

describe('fleet schedule list: a definition read back', () => {
  for (const argv of COMMANDS) {
    it(`a plist's ProgramArguments and StartInterval: ${argv.join(' ')}`, () => {
      expect(launchdDefinition(launchdPlist(input(argv)).content)).to.deep.equal({
        command: argv,
        every: '1800',
      });
    });

    it(`a task's Exec and Interval: ${argv.join(' ')}`, () => {
      const xml = reportTaskXml(input(argv), '2026-01-02T03:04:05').content;
      // Task Scheduler has no environment element: the variables ride as `--env` arguments.
      expect(taskDefinition(xml)).to.deep.equal({
        command: [...argv, '--env', 'FLEET_CREDENTIALS=/home/ann/.config/fleet/credentials.json'],
        every: 'PT30M',
      });
    });
  }

  for (const [name, content] of [
    ['an empty file', ''],
    ['a plist without ProgramArguments', '<plist><dict><key>Label</key></dict></plist>'],
  ] as const) {
    it(`${name}: no command, no interval`, () => {
      expect(launchdDefinition(content)).to.deep.equal({ command: [], every: null });
      expect(taskDefinition(content)).to.deep.equal({ command: [], every: null });
    });
  }
});
