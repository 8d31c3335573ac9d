/**
 * What `fleet schedule` drives the supervisor with (io.ts installs and removes, installed.ts
 * reads back): the operator's seat, where its `~/` paths resolve, and the supervisor's commands
 * run through a {@link ProcessRunner} (never a shell), each recorded.
 */
import { join } from 'node:path';
import { FleetError, type Platform, type ProcessResult, type ProcessRunner } from '@fleet/core';

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

/** Absolute path of a `~/`-relative definition path. */
export function resolveHome(host: ScheduleHost, path: string): string {
  if (host.platform === 'linux' && host.xdgConfigHome && path.startsWith('~/.config/')) {
    return join(host.xdgConfigHome, path.slice('~/.config/'.length));
  }
  return path.startsWith('~/') ? join(host.home, path.slice(2)) : path;
}

export function excerpt(result: ProcessResult): string {
  const text = `${result.stderr}${result.stdout}`.trim().split('\n').slice(0, 3).join(' / ');
  return text === '' ? `exit ${result.exitCode}` : `exit ${result.exitCode}: ${text}`;
}

export function supervisorEnv(env: NodeJS.ProcessEnv): Record<string, string> {
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

/** Runs the supervisor's commands, keeping each call for the verb's answer. */
export class Supervisor {
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
