/**
 * `fleet schedule list`: what fleet installed on this seat, read back by its naming convention
 * (io.ts has the paths per platform) — from the definition files, and on linux from the systemd
 * user manager too (the timer enabled and waiting, the service's last run) — with the last line
 * `report-run` logged for each job.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { splitSystemdCommandLine, splitWindowsArguments, type Platform } from '@fleet/core';
import { LAUNCH_AGENTS_DIR, TASK_SCHEDULE_DIR } from './generate.js';
import { SCHEDULE_PREFIX } from './model.js';
import {
  Supervisor,
  excerpt,
  resolveHome,
  supervisorEnv,
  type ScheduleHost,
} from './supervisor.js';

/** One installed schedule, as read back from its definition files. */
export interface InstalledSchedule {
  readonly name: string;
  readonly platform: Platform;
  /** The definition files, absolute. */
  readonly files: string[];
  /** The command line it runs (the argv). */
  readonly command: string[];
  /** The interval as written in the definition (`1h`, `PT1H`, `3600`), when found. */
  readonly every: string | null;
  /**
   * `installed`: every file there and (linux) the manager has the timer enabled and waiting;
   * `half-installed`: a file is missing, or the manager does not run the timer — what `detail`
   * says (reinstall or remove it). Other platforms: from the files only.
   */
  readonly state: 'installed' | 'half-installed';
  readonly detail: string | null;
  /** The last run as the manager recorded it (linux), when it ran. */
  readonly lastRun: ScheduleLastRun | null;
  /** The last line `report-run` appended to the repository's reports/runs.log for this job. */
  readonly lastLog: string | null;
}

/**
 * The service's last result (`systemctl --user show`: Result, ExecMainStatus, timestamps,
 * ActiveState). While a run is still going the manager's `Result` is the previous one's (or
 * `success` before any ended), so `running` says so: the run's result is not known yet.
 */
export interface ScheduleLastRun {
  readonly result: string;
  readonly exitStatus: number | null;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  /** The service is running now (ActiveState activating or active, not exited). */
  readonly running: boolean;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function readText(path: string): Promise<string | null> {
  try {
    const bytes = await readFile(path);
    if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.subarray(2).toString('utf16le');
    return bytes.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function unitValue(content: string, section: string, key: string): string | undefined {
  let current = '';
  let found: string | undefined;
  for (const raw of content.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header) current = header[1] as string;
    else if (current === section && line.startsWith(`${key}=`)) found = line.slice(key.length + 1);
  }
  return found;
}

function xmlUnescape(value: string): string {
  return value.replace(/&(lt|gt|amp|quot|apos);/g, (_, name: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
    return named[name] as string;
  });
}

/** `Key=Value` lines of `systemctl show`. */
function parseShow(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return out;
}

/** What `report-run` logs per run, in `<repo>/reports/runs.log` (see report-run). */
export const RUNS_LOG = 'reports/runs.log';

/** The last line of the repository's runs log for `verb` (`null`: none). */
async function lastLogLine(command: readonly string[]): Promise<string | null> {
  const at = command.indexOf('report-run');
  const verb = at === -1 ? undefined : command[at + 1];
  const repoAt = command.indexOf('--repo');
  const repo = repoAt === -1 ? undefined : command[repoAt + 1];
  if (verb === undefined || repo === undefined) return null;
  const text = await readText(join(repo, ...RUNS_LOG.split('/')));
  const lines = (text ?? '').split('\n').filter((line) => line.split(' ')[1] === verb);
  return lines.at(-1) ?? null;
}

/**
 * Whether a schedule's oneshot service is running: `activating` (a oneshot's whole run, SubState
 * `start`) or `active` but not `exited` (a service with RemainAfterExit after its run).
 */
export function serviceRunning(activeState?: string, subState?: string): boolean {
  if (activeState === 'activating' || activeState === 'reloading') return true;
  return activeState === 'active' && subState !== 'exited';
}

/** The systemd user manager's view of a schedule (timer state, the service's last result). */
async function managerView(
  supervisor: Supervisor,
  name: string,
): Promise<{ problem: string | null; lastRun: ScheduleLastRun | null }> {
  const timer = await supervisor.run(
    'systemctl',
    [
      '--user',
      'show',
      `${name}.timer`,
      '-p',
      'LoadState',
      '-p',
      'ActiveState',
      '-p',
      'UnitFileState',
    ],
    'reading the timer',
    true,
  );
  if (timer.exitCode !== 0) {
    return { problem: `the user manager cannot be asked (${excerpt(timer)})`, lastRun: null };
  }
  const t = parseShow(timer.stdout);
  const problem =
    t['LoadState'] !== 'loaded'
      ? `the manager has not loaded ${name}.timer (${t['LoadState'] ?? '?'}): systemctl --user daemon-reload, or reinstall`
      : t['UnitFileState'] !== 'enabled' || t['ActiveState'] !== 'active'
        ? `${name}.timer is ${t['UnitFileState'] ?? '?'} and ${t['ActiveState'] ?? '?'}, so it never fires: reinstall it`
        : null;
  const service = parseShow(
    (
      await supervisor.run(
        'systemctl',
        [
          '--user',
          'show',
          `${name}.service`,
          '-p',
          'Result',
          '-p',
          'ExecMainStatus',
          '-p',
          'ExecMainStartTimestamp',
          '-p',
          'ExecMainExitTimestamp',
          '-p',
          'ActiveState',
          '-p',
          'SubState',
        ],
        'reading the last run',
        true,
      )
    ).stdout,
  );
  const started = service['ExecMainStartTimestamp'] || null;
  const lastRun =
    started === null
      ? null
      : {
          result: service['Result'] ?? 'unknown',
          exitStatus:
            service['ExecMainStatus'] === undefined ? null : Number(service['ExecMainStatus']),
          startedAt: started,
          endedAt: service['ExecMainExitTimestamp'] || null,
          running: serviceRunning(service['ActiveState'], service['SubState']),
        };
  return { problem, lastRun };
}

/** Every schedule fleet installed on this platform (by its naming convention). */
export async function listSchedules(
  host: ScheduleHost,
  env: NodeJS.ProcessEnv = process.env,
): Promise<InstalledSchedule[]> {
  switch (host.platform) {
    case 'linux':
      return listSystemdSchedules(host, new Supervisor(host, supervisorEnv(env)));
    case 'darwin':
      return listLaunchdSchedules(host);
    case 'win32':
      return listTaskSchedules(host);
  }
}

/** The state of a schedule read from its files alone: `problem` names what is wrong (pure). */
function fromFiles(problem: string | null) {
  return { state: problem === null ? 'installed' : 'half-installed', detail: problem } as const;
}

/**
 * The systemd user units named `fleet-report-*`: each from its timer and service files, and the
 * manager's view of it (timer enabled and waiting, the service's last run).
 */
async function listSystemdSchedules(
  host: ScheduleHost,
  supervisor: Supervisor,
): Promise<InstalledSchedule[]> {
  const dir = resolveHome(host, '~/.config/systemd/user');
  const names = new Set(
    (await listDir(dir)).flatMap((entry) => {
      const match = /^(fleet-report-[a-z][a-z-]*)\.(timer|service)$/.exec(entry);
      return match ? [match[1] as string] : [];
    }),
  );
  const out: InstalledSchedule[] = [];
  for (const name of [...names].sort()) {
    const timerPath = join(dir, `${name}.timer`);
    const servicePath = join(dir, `${name}.service`);
    const timer = await readText(timerPath);
    const service = await readText(servicePath);
    const execStart = service === null ? undefined : unitValue(service, 'Service', 'ExecStart');
    const command = execStart === undefined ? [] : splitSystemdCommandLine(execStart);
    const missing = [
      timer === null ? `${name}.timer` : null,
      service === null ? `${name}.service` : null,
    ].filter((file): file is string => file !== null);
    const view = await managerView(supervisor, name);
    const problem =
      missing.length > 0
        ? `${missing.join(' and ')} missing: reinstall or remove it`
        : view.problem;
    out.push({
      name,
      platform: 'linux',
      files: [...(timer === null ? [] : [timerPath]), ...(service === null ? [] : [servicePath])],
      command,
      every: timer === null ? null : (unitValue(timer, 'Timer', 'OnUnitActiveSec') ?? null),
      ...fromFiles(problem),
      lastRun: view.lastRun,
      lastLog: await lastLogLine(command),
    });
  }
  return out;
}

/** The launch agents named `dev.fleet.report-*` (and `org.fleet.report-*` of before). */
async function listLaunchdSchedules(host: ScheduleHost): Promise<InstalledSchedule[]> {
  const dir = resolveHome(host, LAUNCH_AGENTS_DIR);
  const out: InstalledSchedule[] = [];
  for (const entry of await listDir(dir)) {
    const match = /^(?:dev|org)\.fleet\.report-([a-z][a-z-]*)\.plist$/.exec(entry);
    if (!match) continue;
    const { command, every } = launchdDefinition((await readText(join(dir, entry))) ?? '');
    out.push({
      name: `${SCHEDULE_PREFIX}${match[1] as string}`,
      platform: 'darwin',
      files: [join(dir, entry)],
      command,
      every,
      ...fromFiles(
        command.length === 0 ? 'the plist names no ProgramArguments: reinstall it' : null,
      ),
      lastRun: null,
      lastLog: await lastLogLine(command),
    });
  }
  return out;
}

/** The task definitions named `fleet-report-*.xml` fleet keeps for Task Scheduler. */
async function listTaskSchedules(host: ScheduleHost): Promise<InstalledSchedule[]> {
  const dir = resolveHome(host, TASK_SCHEDULE_DIR);
  const out: InstalledSchedule[] = [];
  for (const entry of await listDir(dir)) {
    const match = /^(fleet-report-[a-z][a-z-]*)\.xml$/.exec(entry);
    if (!match) continue;
    const { command, every } = taskDefinition((await readText(join(dir, entry))) ?? '');
    out.push({
      name: match[1] as string,
      platform: 'win32',
      files: [join(dir, entry)],
      command,
      every,
      ...fromFiles(
        command.length === 0 ? 'the task definition names no command: reinstall it' : null,
      ),
      lastRun: null,
      lastLog: await lastLogLine(command),
    });
  }
  return out;
}

/** What a schedule's definition says it runs, and how often as written there. */
export interface DefinedSchedule {
  readonly command: string[];
  readonly every: string | null;
}

/** A launchd plist's `ProgramArguments` and `StartInterval` (pure). */
export function launchdDefinition(content: string): DefinedSchedule {
  const array =
    /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(content)?.[1] ?? '';
  const command = [...array.matchAll(/<string>([\s\S]*?)<\/string>/g)].map((m) =>
    xmlUnescape(m[1] as string),
  );
  const every = /<key>StartInterval<\/key>\s*<integer>(\d+)<\/integer>/.exec(content)?.[1] ?? null;
  return { command, every };
}

/** A Task Scheduler definition's `Exec` command line and repetition `Interval` (pure). */
export function taskDefinition(content: string): DefinedSchedule {
  const exec = /<Exec>([\s\S]*?)<\/Exec>/.exec(content)?.[1] ?? '';
  const commandText = /<Command>([\s\S]*?)<\/Command>/.exec(exec)?.[1];
  const argsText = /<Arguments>([\s\S]*?)<\/Arguments>/.exec(exec)?.[1] ?? '';
  const command =
    commandText === undefined
      ? []
      : [xmlUnescape(commandText), ...splitWindowsArguments(xmlUnescape(argsText))];
  return { command, every: /<Interval>([^<]*)<\/Interval>/.exec(content)?.[1] ?? null };
}
