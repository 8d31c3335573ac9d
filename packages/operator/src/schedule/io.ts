/**
 * The imperative half of `fleet schedule`: writes the generated definitions under the operator's
 * home, drives the supervisor through a {@link ProcessRunner} (never a shell), reads back what
 * fleet installed (by its naming convention) and removes it.
 *
 *   linux   ~/.config/systemd/user/fleet-report-<slug>.{service,timer}
 *           systemctl --user daemon-reload; systemctl --user enable --now <name>.timer
 *           remove: systemctl --user disable --now <name>.timer; rm; daemon-reload
 *   darwin  ~/Library/LaunchAgents/dev.fleet.report-<slug>.plist (org.fleet.report-* of before: listed, removed;
 *           dev.fleet.schedule.<slug> and org.fleet.report-<slug> migrated by an install of <slug>)
 *           launchctl bootstrap gui/<uid> <plist>; remove: launchctl bootout gui/<uid>/<label>
 *   win32   ~/AppData/Local/fleet/schedule/fleet-report-<slug>.xml
 *           schtasks /Create /XML <file> /TN <name> /F; remove: schtasks /Delete /TN <name> /F
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  FleetError,
  splitSystemdCommandLine,
  splitWindowsArguments,
  type Platform,
  type ProcessResult,
  type ProcessRunner,
} from '@fleet/core';
import {
  launchdPlist,
  localStartBoundary,
  reportTaskXml,
  systemdTimerFiles,
  TASK_SCHEDULE_DIR,
  LAUNCH_AGENTS_DIR,
  type ScheduleFile,
  type ScheduleInput,
} from './generate.js';
import { launchdLabel, SCHEDULE_PREFIX } from './model.js';

export interface ScheduleHost {
  readonly platform: Platform;
  /** The operator's home (`~`). */
  readonly home: string;
  /** `$XDG_CONFIG_HOME`, when set (systemd user units live under it). */
  readonly xdgConfigHome?: string;
  readonly runner: ProcessRunner;
  /** The user id, for launchd's `gui/<uid>` domain. */
  readonly uid?: number;
  readonly now: () => Date;
}

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

export interface InstallResult {
  readonly name: string;
  readonly platform: Platform;
  readonly files: string[];
  readonly command: string[];
  readonly supervisor: string[][];
}

/** Absolute path of a `~/`-relative definition path. */
export function resolveHome(host: ScheduleHost, path: string): string {
  if (host.platform === 'linux' && host.xdgConfigHome && path.startsWith('~/.config/')) {
    return join(host.xdgConfigHome, path.slice('~/.config/'.length));
  }
  return path.startsWith('~/') ? join(host.home, path.slice(2)) : path;
}

async function writeAtomic(path: string, file: ScheduleFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  const bytes =
    file.encoding === 'utf16le'
      ? Buffer.from(`\ufeff${file.content}`, 'utf16le')
      : Buffer.from(file.content, 'utf8');
  await writeFile(temp, bytes, { mode: 0o644 });
  await rename(temp, path);
}

function excerpt(result: ProcessResult): string {
  const text = `${result.stderr}${result.stdout}`.trim().split('\n').slice(0, 3).join(' / ');
  return text === '' ? `exit ${result.exitCode}` : `exit ${result.exitCode}: ${text}`;
}

function supervisorEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const extra: Record<string, string> = {};
  // `systemctl --user` reaches the user manager through these; the fakes keep state by these.
  for (const key of [
    'XDG_RUNTIME_DIR',
    'DBUS_SESSION_BUS_ADDRESS',
    'XDG_CONFIG_HOME',
    'FLEET_FAKE_SUPERVISOR_DIR',
    'FLEET_FAKE_SUPERVISOR_FAULTS',
  ]) {
    const value = env[key];
    if (value !== undefined && value !== '') extra[key] = value;
  }
  return extra;
}

class Supervisor {
  readonly calls: string[][] = [];
  constructor(
    private readonly host: ScheduleHost,
    private readonly extraEnv: Record<string, string>,
  ) {}

  async run(command: string, args: string[], what: string, allowFailure = false) {
    this.calls.push([command, ...args]);
    const result = await this.host.runner.run({
      command,
      args,
      cwd: this.host.home,
      extraEnv: this.extraEnv,
      timeoutMs: 60_000,
    });
    if (result.exitCode !== 0 && !allowFailure) {
      // Exit 3, not 6: the caller removes what it wrote, so nothing changed (contract §7).
      throw new FleetError(
        'SUPERVISOR_FAILED',
        `${command} ${args.join(' ')} (${what}) failed: ${excerpt(result)}`,
      );
    }
    return result;
  }
}

/** The files a schedule is made of on this platform (pure, given the input). */
export function definitionFiles(host: ScheduleHost, input: ScheduleInput): ScheduleFile[] {
  switch (host.platform) {
    case 'linux':
      return systemdTimerFiles(input);
    case 'darwin':
      return [launchdPlist(input)];
    case 'win32':
      return [reportTaskXml(input, localStartBoundary(host.now()))];
  }
}

/** Writes the definitions and registers them with the supervisor (replacing an earlier one). */
export async function installSchedule(
  host: ScheduleHost,
  input: ScheduleInput,
  env: NodeJS.ProcessEnv = process.env,
): Promise<InstallResult> {
  const files = definitionFiles(host, input);
  const supervisor = new Supervisor(host, supervisorEnv(env));
  const written: string[] = [];
  try {
    for (const file of files) {
      const path = resolveHome(host, file.path);
      await writeAtomic(path, file);
      written.push(path);
    }
    await register(host, supervisor, input, written);
  } catch (error) {
    // Nothing half-installed is left behind (a seat without a user bus, a manager that refuses):
    // the files written are removed again and the manager forgets them.
    for (const path of written) await rm(path, { force: true });
    if (host.platform === 'linux' && written.length > 0) {
      await supervisor
        .run('systemctl', ['--user', 'disable', `${input.name}.timer`], 'disabling', true)
        .catch(() => undefined);
      await supervisor
        .run('systemctl', ['--user', 'daemon-reload'], 'unloading the units', true)
        .catch(() => undefined);
    }
    if (error instanceof FleetError) {
      throw new FleetError(
        error.code,
        `${error.message}; nothing was left installed (${written.length} file${written.length === 1 ? '' : 's'} removed again)`,
        { suggestions: [...error.suggestions] },
      );
    }
    throw error;
  }
  return {
    name: input.name,
    platform: host.platform,
    files: written,
    command: [...input.argv],
    supervisor: supervisor.calls,
  };
}

async function register(
  host: ScheduleHost,
  supervisor: Supervisor,
  input: ScheduleInput,
  written: readonly string[],
): Promise<void> {
  switch (host.platform) {
    case 'linux':
      await supervisor.run('systemctl', ['--user', 'daemon-reload'], 'loading the units');
      await supervisor.run(
        'systemctl',
        ['--user', 'enable', '--now', `${input.name}.timer`],
        'enabling the timer',
      );
      break;
    case 'darwin': {
      const domain = `gui/${host.uid ?? 0}`;
      // launchd creates no directory: a job whose StandardOutPath folder is missing never runs
      // (its last exit is 78, EX_CONFIG).
      await mkdir(input.logDir, { recursive: true, mode: 0o700 });
      // The same job under an earlier label scheme is migrated: unloaded and its plist removed.
      const slug = input.name.slice(SCHEDULE_PREFIX.length);
      for (const legacy of [`dev.fleet.schedule.${slug}`, `org.fleet.report-${slug}`]) {
        await supervisor.run('launchctl', ['bootout', `${domain}/${legacy}`], 'unloading', true);
        await rm(resolveHome(host, `${LAUNCH_AGENTS_DIR}/${legacy}.plist`), { force: true });
      }
      // A schedule installed before is replaced: unload it first (absent is fine).
      await supervisor.run(
        'launchctl',
        ['bootout', `${domain}/${launchdLabel(input.name)}`],
        'unloading',
        true,
      );
      await supervisor.run(
        'launchctl',
        ['bootstrap', domain, written[0] as string],
        'loading the agent',
      );
      break;
    }
    case 'win32':
      await supervisor.run(
        'schtasks',
        ['/Create', '/XML', written[0] as string, '/TN', input.name, '/F'],
        'registering the task',
      );
      break;
  }
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

// What a schedule writes is git-ignored when it is installed (ignore.ts): here for the command.
export { ensureReportsIgnored, type IgnoreResult } from './ignore.js';

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
  const out: InstalledSchedule[] = [];
  const supervisor = new Supervisor(host, supervisorEnv(env));
  const fromFiles = (problem: string | null) =>
    ({ state: problem === null ? 'installed' : 'half-installed', detail: problem }) as const;
  switch (host.platform) {
    case 'linux': {
      const dir = resolveHome(host, '~/.config/systemd/user');
      const names = new Set(
        (await listDir(dir)).flatMap((entry) => {
          const match = /^(fleet-report-[a-z][a-z-]*)\.(timer|service)$/.exec(entry);
          return match ? [match[1] as string] : [];
        }),
      );
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
          files: [
            ...(timer === null ? [] : [timerPath]),
            ...(service === null ? [] : [servicePath]),
          ],
          command,
          every: timer === null ? null : (unitValue(timer, 'Timer', 'OnUnitActiveSec') ?? null),
          ...fromFiles(problem),
          lastRun: view.lastRun,
          lastLog: await lastLogLine(command),
        });
      }
      break;
    }
    case 'darwin': {
      const dir = resolveHome(host, LAUNCH_AGENTS_DIR);
      for (const entry of await listDir(dir)) {
        const match = /^(?:dev|org)\.fleet\.report-([a-z][a-z-]*)\.plist$/.exec(entry);
        if (!match) continue;
        const content = (await readText(join(dir, entry))) ?? '';
        const array =
          /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(content)?.[1] ?? '';
        const command = [...array.matchAll(/<string>([\s\S]*?)<\/string>/g)].map((m) =>
          xmlUnescape(m[1] as string),
        );
        const every =
          /<key>StartInterval<\/key>\s*<integer>(\d+)<\/integer>/.exec(content)?.[1] ?? null;
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
      break;
    }
    case 'win32': {
      const dir = resolveHome(host, TASK_SCHEDULE_DIR);
      for (const entry of await listDir(dir)) {
        const match = /^(fleet-report-[a-z][a-z-]*)\.xml$/.exec(entry);
        if (!match) continue;
        const content = (await readText(join(dir, entry))) ?? '';
        const exec = /<Exec>([\s\S]*?)<\/Exec>/.exec(content)?.[1] ?? '';
        const commandText = /<Command>([\s\S]*?)<\/Command>/.exec(exec)?.[1];
        const argsText = /<Arguments>([\s\S]*?)<\/Arguments>/.exec(exec)?.[1] ?? '';
        const command =
          commandText === undefined
            ? []
            : [xmlUnescape(commandText), ...splitWindowsArguments(xmlUnescape(argsText))];
        out.push({
          name: match[1] as string,
          platform: 'win32',
          files: [join(dir, entry)],
          command,
          every: /<Interval>([^<]*)<\/Interval>/.exec(content)?.[1] ?? null,
          ...fromFiles(
            command.length === 0 ? 'the task definition names no command: reinstall it' : null,
          ),
          lastRun: null,
          lastLog: await lastLogLine(command),
        });
      }
      break;
    }
  }
  return out;
}

/** Unregisters a schedule fleet installed and deletes its definition files. */
export async function removeSchedule(
  host: ScheduleHost,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ readonly name: string; readonly removed: string[]; readonly supervisor: string[][] }> {
  const found = (await listSchedules(host, env)).find((schedule) => schedule.name === name);
  if (!found) {
    throw new FleetError('USAGE', `no fleet schedule named ${name} on this seat`, {
      suggestions: ['fleet schedule list'],
    });
  }
  const supervisor = new Supervisor(host, supervisorEnv(env));
  switch (host.platform) {
    case 'linux':
      await supervisor.run(
        'systemctl',
        ['--user', 'disable', '--now', `${name}.timer`],
        'disabling the timer',
      );
      break;
    case 'darwin':
      for (const file of found.files) {
        const label = basename(file).replace(/\.plist$/, '');
        await supervisor.run(
          'launchctl',
          ['bootout', `gui/${host.uid ?? 0}/${label}`],
          'unloading the agent',
          true,
        );
      }
      break;
    case 'win32':
      await supervisor.run('schtasks', ['/Delete', '/TN', name, '/F'], 'deleting the task');
      break;
  }
  for (const file of found.files) await rm(file, { force: true });
  if (host.platform === 'linux') {
    await supervisor.run('systemctl', ['--user', 'daemon-reload'], 'unloading the units');
  }
  return { name, removed: found.files, supervisor: supervisor.calls };
}
