/**
 * The imperative half of `fleet schedule`: writes the generated definitions under the operator's
 * home, drives the supervisor through a {@link ProcessRunner} (never a shell; supervisor.ts),
 * reads back what fleet installed (by its naming convention; installed.ts) and removes it.
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
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { FleetError, type Platform } from '@fleet/core';
import {
  launchdPlist,
  localStartBoundary,
  reportTaskXml,
  systemdTimerFiles,
  LAUNCH_AGENTS_DIR,
  type ScheduleFile,
  type ScheduleInput,
} from './generate.js';
import { listSchedules } from './installed.js';
import { launchdLabel, SCHEDULE_PREFIX } from './model.js';
import { Supervisor, resolveHome, supervisorEnv, type ScheduleHost } from './supervisor.js';

// What the verbs take and read back live in their own modules; the commands import them here.
export { resolveHome, type ScheduleHost } from './supervisor.js';
export {
  RUNS_LOG,
  listSchedules,
  serviceRunning,
  type InstalledSchedule,
  type ScheduleLastRun,
} from './installed.js';

export interface InstallResult {
  readonly name: string;
  readonly platform: Platform;
  readonly files: string[];
  readonly command: string[];
  readonly supervisor: string[][];
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

// What a schedule writes is git-ignored when it is installed (ignore.ts): here for the command.
export { ensureReportsIgnored, type IgnoreResult } from './ignore.js';

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
