/**
 * What the systemd-user adapter asks of the machine besides `systemctl`: lingering (logind, or its
 * own record when no logind runs), which unit this very process runs in (`/proc/self/cgroup`), and
 * starting a job as a transient unit of its own (`systemd-run --user`) — the way the runtime
 * runner and the `--node-id` switch leave the controller's control group, which a restart of the
 * controller's unit ends whole (`KillMode=control-group`; docs/runtime-lifecycle.md, "The runner
 * leaves the cgroup").
 */
import { existsSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import {
  FleetError,
  type DetachedJob,
  type DetachedLaunch,
  type NodeContext,
  type ProcessResult,
} from '@fleet/core/plugin';

export type SystemctlRunner = (ctx: NodeContext, ...args: string[]) => Promise<ProcessResult>;

/** `Key=Value` lines of `systemctl show`. */
export function parseShow(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const equals = line.indexOf('=');
    if (equals > 0) out[line.slice(0, equals)] = line.slice(equals + 1).trim();
  }
  return out;
}

/** The first lines of what a command said, for an error message. */
export const excerpt = (result: ProcessResult): string =>
  (result.stderr.trim() || result.stdout.trim() || `exit ${result.exitCode}`)
    .split('\n')
    .slice(0, 4)
    .join(' / ')
    .slice(0, 500);

/** logind's persistent record of lingering users (what `loginctl enable-linger` writes). */
export const LINGER_DIR = '/var/lib/systemd/linger';

/**
 * Whether the user lingers (its manager runs without a login session, catalogue 54): logind's
 * answer (`loginctl show-user <uid> -p Linger`); where no logind runs to ask, its own record.
 */
export async function linger(
  ctx: NodeContext,
  uid: number,
  timeoutMs: number,
): Promise<'yes' | 'no' | 'unknown'> {
  const result = await ctx.processes.run({
    command: 'loginctl',
    args: ['show-user', String(uid), '--property=Linger', '--value'],
    timeoutMs,
  });
  const value = result.stdout.trim();
  if (result.exitCode === 0 && (value === 'yes' || value === 'no')) return value;
  const name = uid === process.getuid?.() ? userInfo().username : null;
  return name !== null && existsSync(`${LINGER_DIR}/${name}`) ? 'yes' : 'unknown';
}

/**
 * The unit (`*.service`, `*.scope`) whose control group this process is in, from
 * `/proc/self/cgroup` (the unified hierarchy's line, else the named `systemd` one); `null` outside
 * any unit or off Linux.
 */
export async function processCgroupUnit(): Promise<string | null> {
  const text = await readFile('/proc/self/cgroup', 'utf8').catch(() => '');
  const lines = text.split('\n');
  const line =
    lines.find((entry) => entry.startsWith('0::')) ??
    lines.find((entry) => /^\d+:name=systemd:/.test(entry));
  const last = line?.slice(line.lastIndexOf('/') + 1) ?? '';
  return /\.(service|scope)$/.test(last) ? last : null;
}

const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$/;

/**
 * Starts `job` as the transient service `<name>.service` of the user manager (`systemd-run --user
 * --collect`): its own control group, so a restart of the controller's unit cannot end it. Its
 * environment goes by name (`--setenv=NAME`: systemd-run passes its own value on, nothing on a
 * command line), its output is appended to `job.log`. When systemd-run is missing or the manager
 * refuses: from inside the controller's unit that is a refusal (nothing started); from anywhere
 * else a detached child is safe, and the caller starts one (`not-needed`).
 */
export async function launchTransientUnit(
  ctx: NodeContext,
  job: DetachedJob,
  options: {
    readonly controllerUnit: string;
    readonly extraEnv: Readonly<Record<string, string>>;
    readonly timeoutMs: number;
    readonly systemctl: SystemctlRunner;
  },
): Promise<DetachedLaunch> {
  if (!JOB_NAME.test(job.name)) {
    throw new FleetError('USAGE', `${JSON.stringify(job.name)} cannot name a transient unit`);
  }
  if (/[\n\r\0]/.test(job.log) || /[\n\r\0]/.test(job.cwd)) {
    throw new FleetError('USAGE', 'a line break or NUL cannot be part of a job path');
  }
  const unit = `${job.name}.service`;
  // The log exists, private, before systemd opens it for appending (it would create it 0644).
  await (await open(job.log, 'a', 0o600)).close();
  const env: Record<string, string> = { ...job.env, ...options.extraEnv };
  const result = await ctx.processes.run({
    command: 'systemd-run',
    args: [
      '--user',
      `--unit=${unit}`,
      '--collect',
      '--quiet',
      `--working-directory=${job.cwd}`,
      `--property=StandardOutput=append:${job.log}`,
      `--property=StandardError=append:${job.log}`,
      ...Object.keys(env).map((name) => `--setenv=${name}`),
      '--',
      ...job.argv,
    ],
    env,
    timeoutMs: options.timeoutMs,
  });
  if (result.exitCode === 0 && !result.timedOut) {
    const shown = parseShow(
      (await options.systemctl(ctx, 'show', '--property=MainPID', unit)).stdout,
    );
    const pid = Number.parseInt(shown['MainPID'] ?? '0', 10) || null;
    return {
      started: 'supervisor',
      pid,
      detail: `the transient unit ${unit} of the user manager`,
    };
  }
  const why =
    result.exitCode === -1
      ? `systemd-run could not run: ${excerpt(result)}`
      : `systemd-run failed: ${excerpt(result)}`;
  if ((await processCgroupUnit()) === options.controllerUnit) {
    throw new FleetError(
      'ACTION_FAILED',
      `${job.name} cannot leave ${options.controllerUnit}, whose restart would end it (${why}); nothing was started`,
    );
  }
  return {
    started: 'not-needed',
    detail: `${why}; this process is not in ${options.controllerUnit}, so a detached child outlives its restart`,
  };
}
