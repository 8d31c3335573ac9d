/**
 * The supervisor definitions of a scheduled report, one pure function per platform (contract §7
 * `fleet schedule`): a systemd user service + timer (Linux), a launchd agent plist (macOS), a
 * Task Scheduler XML task (Windows). Quoting and escaping are the bootstrap adapters' own, shared
 * through @fleet/core (`quoteSystemdWord`, `quoteWindowsArgument`, `xmlEscape`), so a
 * path with spaces, `%`, `$` or quotes comes back as the exact argv.
 */
import {
  FleetError,
  quoteSystemdWord,
  TASK_NAMESPACE,
  windowsTaskArguments,
  xmlEscape,
} from '@fleet/core';
import { formatEvery, launchdLabel } from './model.js';

export interface ScheduleInput {
  /** `fleet-report-<slug>`. */
  readonly name: string;
  /** What it runs, for the description (`drift`, `harness reconcile --unattended`). */
  readonly title: string;
  /** The whole command: `<node> <fleet bin> report-run drift --repo <repo>`. */
  readonly argv: readonly string[];
  /** The fleet repository (the working directory of the job). */
  readonly repo: string;
  readonly everySeconds: number;
  /** A read-only report (`drift`, `version`), or the §10.3 reconcile, which writes to hosts. */
  readonly readOnly: boolean;
  /**
   * What the run needs from the installing shell, by name: `FLEET_CREDENTIALS` (the credentials
   * file's absolute path — never a token), `XDG_STATE_HOME`, `XDG_CONFIG_HOME`. Only absolute
   * paths are accepted: a unit file never carries a value that could be a secret.
   */
  readonly environment: Readonly<Record<string, string>>;
  /** Where launchd appends the run's output (absolute; `~/Library/Logs/fleet`). */
  readonly logDir: string;
  /**
   * Tests only (`FLEET_SCHEDULE_TEST_PERIOD_SECONDS`, docs/scheduled-reports.md): the timer's
   * first run and period in seconds, below `--every`'s 5-minute floor. Never a user's setting.
   */
  readonly testPeriodSeconds?: number;
}

/** The variables a schedule may carry (see {@link ScheduleInput.environment}). */
export const SCHEDULE_ENVIRONMENT = ['FLEET_CREDENTIALS', 'XDG_CONFIG_HOME', 'XDG_STATE_HOME'];

/** One file to write: `~/`-relative path, content, encoding. */
export interface ScheduleFile {
  readonly path: string;
  readonly content: string;
  readonly encoding: 'utf8' | 'utf16le';
}

function refuse(message: string): FleetError {
  return new FleetError('USAGE', `schedule: ${message}`);
}

/** A variable a schedule may carry: one of {@link SCHEDULE_ENVIRONMENT}, an absolute path. */
function checkVariable(name: string, value: string): void {
  if (!SCHEDULE_ENVIRONMENT.includes(name))
    throw refuse(
      `${name} is not a variable a schedule carries (${SCHEDULE_ENVIRONMENT.join(', ')})`,
    );
  if (!/^([A-Za-z]:)?[\\/]/.test(value) || /[\r\n\0]/.test(value))
    throw refuse(`${name} must be an absolute path, not ${JSON.stringify(value.slice(0, 40))}`);
}

/**
 * `report-run --env NAME=VALUE` (repeatable), how a Task Scheduler task carries its environment:
 * a task's action has no environment of its own and starts in the user's logon environment, so
 * the variables travel on its command line — paths only, checked as a unit file's are.
 */
export function parseEnvironmentFlags(entries: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.indexOf('=');
    if (at <= 0) throw refuse(`--env ${JSON.stringify(entry.slice(0, 40))} is not NAME=VALUE`);
    const [name, value] = [entry.slice(0, at), entry.slice(at + 1)];
    checkVariable(name, value);
    out[name] = value;
  }
  return out;
}

function checkInput(input: ScheduleInput): void {
  const [executable] = input.argv;
  if (executable === undefined || executable === '') throw refuse('the command is empty');
  for (const word of [...input.argv, input.repo]) {
    if (/[\r\n\0]/.test(word)) throw refuse('a line break or NUL cannot be part of the command');
  }
  for (const [name, value] of Object.entries(input.environment)) checkVariable(name, value);
  if (
    input.testPeriodSeconds !== undefined &&
    (!Number.isInteger(input.testPeriodSeconds) || input.testPeriodSeconds < 1)
  )
    throw refuse('the test period must be a whole number of seconds');
}

/** What the definition's header says the job does: the truth for each kind. */
function headerLines(input: ScheduleInput): string[] {
  return input.readOnly
    ? [
        `the scheduled ${input.title} report.`,
        `Read-only on every host: it writes the dated report set under ${input.repo}/reports/ and one`,
        `line per run to reports/runs.log. Remove it with \`fleet schedule remove ${input.name}\`.`,
      ]
    : [
        `the scheduled ${input.title}.`,
        'It WRITES to hosts: it installs the harness-policy domain where fleet.yaml opts in',
        `(domains.harness-policy.unattended: allow, re-checked every run; contract §10.3). Remove it with \`fleet schedule remove ${input.name}\`.`,
      ];
}

export const SYSTEMD_USER_DIR = '~/.config/systemd/user';

/** `<name>.service` (Type=oneshot, the report) and `<name>.timer` (every N, persistent). */
export function systemdTimerFiles(input: ScheduleInput): ScheduleFile[] {
  checkInput(input);
  if (!(input.argv[0] as string).startsWith('/') || !input.repo.startsWith('/'))
    throw refuse('the node binary and the repository must be absolute paths');
  const every =
    input.testPeriodSeconds === undefined
      ? formatEvery(input.everySeconds).replace(/m$/, 'min')
      : `${input.testPeriodSeconds}s`;
  const [first, ...rest] = headerLines(input);
  const service = [
    `# Generated by fleet (fleet schedule install): ${first}`,
    ...rest.map((line) => `# ${line}`),
    '[Unit]',
    `Description=fleet scheduled ${input.title}`,
    '',
    '[Service]',
    'Type=oneshot',
    `ExecStart=${input.argv.map((word) => quoteSystemdWord(word)).join(' ')}`,
    `WorkingDirectory=${input.repo.replace(/%/g, '%%')}`,
    'Environment=NODE_ENV=production',
    ...Object.entries(input.environment).map(
      ([name, value]) => `Environment=${quoteSystemdWord(`${name}=${value}`, false)}`,
    ),
    'TimeoutStartSec=2h',
    'UMask=0022',
    'Nice=10',
    '',
  ].join('\n');
  const timer = [
    `# Generated by fleet (fleet schedule install): runs ${input.name}.service every ${every}.`,
    '[Unit]',
    `Description=fleet scheduled ${input.title} (every ${every})`,
    '',
    '[Timer]',
    `OnBootSec=${input.testPeriodSeconds === undefined ? '5min' : `${input.testPeriodSeconds}s`}`,
    `OnUnitActiveSec=${every}`,
    // systemd coalesces timers within a minute by default: under the tests' period, to the second.
    ...(input.testPeriodSeconds === undefined ? [] : ['AccuracySec=1s']),
    'Persistent=true',
    `Unit=${input.name}.service`,
    '',
    '[Install]',
    'WantedBy=timers.target',
    '',
  ].join('\n');
  return [
    { path: `${SYSTEMD_USER_DIR}/${input.name}.service`, content: service, encoding: 'utf8' },
    { path: `${SYSTEMD_USER_DIR}/${input.name}.timer`, content: timer, encoding: 'utf8' },
  ];
}

export const LAUNCH_AGENTS_DIR = '~/Library/LaunchAgents';
export const PLIST_DOCTYPE =
  '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">';

/**
 * `~/Library/LaunchAgents/dev.fleet.report-<slug>.plist` (the label scheme `fleet version` reads
 * too): StartInterval, RunAtLoad (a first run when it is loaded, as the systemd timer's
 * OnBootSec), the run's output appended to `<logDir>/<label>.log`, the environment it needs.
 */
export function launchdPlist(input: ScheduleInput): ScheduleFile {
  checkInput(input);
  if (!input.logDir.startsWith('/')) throw refuse('the log directory must be an absolute path');
  const label = launchdLabel(input.name);
  const strings = input.argv.map((word) => `    <string>${xmlEscape(word)}</string>`);
  const log = `${input.logDir}/${label}.log`;
  const environment = Object.entries({ NODE_ENV: 'production', ...input.environment }).flatMap(
    ([name, value]) => [
      `    <key>${xmlEscape(name)}</key>`,
      `    <string>${xmlEscape(value)}</string>`,
    ],
  );
  const [first, ...rest] = headerLines(input);
  const content = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    PLIST_DOCTYPE,
    `<!-- Generated by fleet (fleet schedule install), every ${formatEvery(input.everySeconds)}: ${xmlEscape([first, ...rest].join(' ').replace(/--/g, '- -'))} -->`,
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  <string>${xmlEscape(label)}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...strings,
    '  </array>',
    '  <key>WorkingDirectory</key>',
    `  <string>${xmlEscape(input.repo)}</string>`,
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...environment,
    '  </dict>',
    '  <key>StartInterval</key>',
    `  <integer>${input.testPeriodSeconds ?? input.everySeconds}</integer>`,
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>StandardOutPath</key>',
    `  <string>${xmlEscape(log)}</string>`,
    '  <key>StandardErrorPath</key>',
    `  <string>${xmlEscape(log)}</string>`,
    '  <key>ProcessType</key>',
    '  <string>Background</string>',
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
  return { path: `${LAUNCH_AGENTS_DIR}/${label}.plist`, content, encoding: 'utf8' };
}

export const TASK_SCHEDULE_DIR = '~/AppData/Local/fleet/schedule';

/** ISO 8601 duration for a Task Scheduler repetition interval (`PT30M`, `PT6H`, `P1D`). */
export function taskInterval(seconds: number): string {
  if (seconds % 86_400 === 0) return `P${seconds / 86_400}D`;
  if (seconds % 3600 === 0) return `PT${seconds / 3600}H`;
  return `PT${Math.ceil(seconds / 60)}M`;
}

/**
 * The task XML (UTF-16LE, as the controller's task): a TimeTrigger starting at `startBoundary`
 * (local time, `YYYY-MM-DDTHH:MM:SS`) repeating every interval indefinitely, StartWhenAvailable
 * (a missed run happens at the next chance), one instance at a time, a 2-hour limit. Task
 * Scheduler has no environment element and starts the action in the user's logon environment:
 * the schedule's variables (paths, never secrets) are `report-run --env NAME=VALUE` arguments.
 */
export function reportTaskXml(input: ScheduleInput, startBoundary: string): ScheduleFile {
  checkInput(input);
  for (const word of input.argv) {
    if (word.includes('%'))
      throw refuse(`"%" in ${JSON.stringify(word)} would be expanded by Task Scheduler`);
  }
  if (input.repo.includes('%')) throw refuse('the repository path holds "%"');
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(startBoundary))
    throw refuse(`start boundary ${JSON.stringify(startBoundary)} is not a local date-time`);
  for (const value of Object.values(input.environment)) {
    if (value.includes('%'))
      throw refuse(`"%" in ${JSON.stringify(value)} would be expanded by Task Scheduler`);
  }
  // The action has no environment element: the variables ride on report-run's command line.
  const [command, ...args] = [
    ...input.argv,
    ...Object.entries(input.environment).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
  ] as [string, ...string[]];
  const content = `<?xml version="1.0" encoding="UTF-16"?>
<!-- Generated by fleet (fleet schedule install): ${xmlEscape(headerLines(input).join(' ').replace(/--/g, '- -'))} -->
<Task version="1.2" xmlns="${TASK_NAMESPACE}">
  <RegistrationInfo>
    <Author>fleet</Author>
    <Description>fleet scheduled ${xmlEscape(input.title)} (every ${formatEvery(input.everySeconds)})</Description>
    <URI>\\${xmlEscape(input.name)}</URI>
  </RegistrationInfo>
  <Triggers>
    <TimeTrigger>
      <StartBoundary>${startBoundary}</StartBoundary>
      <Enabled>true</Enabled>
      <Repetition>
        <Interval>${taskInterval(input.everySeconds)}</Interval>
        <StopAtDurationEnd>false</StopAtDurationEnd>
      </Repetition>
    </TimeTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <AllowHardTerminate>true</AllowHardTerminate>
    <StartWhenAvailable>true</StartWhenAvailable>
    <RunOnlyIfNetworkAvailable>false</RunOnlyIfNetworkAvailable>
    <AllowStartOnDemand>true</AllowStartOnDemand>
    <Enabled>true</Enabled>
    <Hidden>false</Hidden>
    <RunOnlyIfIdle>false</RunOnlyIfIdle>
    <WakeToRun>false</WakeToRun>
    <ExecutionTimeLimit>PT2H</ExecutionTimeLimit>
    <Priority>7</Priority>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>${xmlEscape(command)}</Command>
      <Arguments>${xmlEscape(windowsTaskArguments(command, args, input.repo))}</Arguments>
      <WorkingDirectory>${xmlEscape(input.repo)}</WorkingDirectory>
    </Exec>
  </Actions>
</Task>
`;
  return { path: `${TASK_SCHEDULE_DIR}/${input.name}.xml`, content, encoding: 'utf16le' };
}

/** Local `YYYY-MM-DDTHH:MM:SS` of `date` rounded up to the next minute (Task Scheduler's form). */
export function localStartBoundary(date: Date): string {
  const next = new Date(Math.ceil(date.getTime() / 60_000) * 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${next.getFullYear()}-${pad(next.getMonth() + 1)}-${pad(next.getDate())}T${pad(next.getHours())}:${pad(next.getMinutes())}:00`;
}
