/**
 * The fake launchd behind the fake `launchctl` (launchctl.ts, whose file comment cites the rules
 * launchd.plist(5) and launchctl(1) give): the user's `gui/<uid>` domain as it keeps it in
 * `<state dir>/launchd/` (the services bootstrapped, each with its plist as it was then, the
 * variables `setenv` set), the environment its jobs get, and starting and ending a job's process.
 * Apart from launchctl.ts because that file is the command line — the forms it accepts, what each
 * prints — and this is what the commands act on.
 */
import { accessSync, constants, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { processAlive, readJson, stateRoot, writeJson, type Env } from './common.js';
import { readLaunchdJob, type LaunchdJob } from './launchd-job.js';
import { parsePlist } from './plist-file.js';
import { isRunning, readRun, runPaths, startRun, type RunRecord } from './runs.js';

/** launchd's default PATH for a user domain's jobs. */
export const LAUNCHD_DEFAULT_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';
/** EX_CONFIG (sysexits(3)): what launchd records for a job it could not spawn. */
export const EX_CONFIG = 78;

export interface Service {
  readonly label: string;
  readonly path: string;
  /** The plist as it was when bootstrapped. */
  readonly plist: string;
  readonly bootstrappedAt: string;
  /** The job could not be spawned (EX_CONFIG), and has not run since. */
  spawnFailed?: boolean;
}

export interface LaunchdState {
  services: Record<string, Service>;
}

export function launchdDir(env: Env): string {
  return join(stateRoot(env), 'launchd');
}
export const load = (env: Env): LaunchdState =>
  readJson<LaunchdState>(join(launchdDir(env), 'state.json'), { services: {} });
export const save = (env: Env, state: LaunchdState): void =>
  writeJson(join(launchdDir(env), 'state.json'), state);

/** A label as a run's file name. */
export const launchdRunKey = (label: string): string => label.replace(/[^A-Za-z0-9._-]/g, '_');

/** The PATH jobs get: the user domain's (`<state>/launchd/user-path`), else launchd's default. */
function domainPath(env: Env): string {
  try {
    const path = readFileSync(join(launchdDir(env), 'user-path'), 'utf8').trim();
    return path || LAUNCHD_DEFAULT_PATH;
  } catch {
    return LAUNCHD_DEFAULT_PATH;
  }
}

/** `--import` of as-darwin.ts: what a process that must report darwin runs with. */
export const AS_DARWIN_NODE_OPTIONS = `--import=${new URL('./as-darwin.js', import.meta.url).href}`;

/**
 * Jobs run "on a Mac" (`<state>/launchd/platform` says `darwin`, `FakeSupervisorHost.runJobsOnMac`):
 * every job that is a Node program reports `process.platform === 'darwin'` (as-darwin.ts), as it
 * would under the real launchd, which runs only on macOS. Off by default: a test of the fake alone
 * needs no Mac.
 */
function jobsOnMac(env: Env): boolean {
  try {
    return readFileSync(join(launchdDir(env), 'platform'), 'utf8').trim() === 'darwin';
  } catch {
    return false;
  }
}

/** What `launchctl setenv` set in the domain (`<state>/launchd/env.json`). */
export const domainEnv = (env: Env): Record<string, string> =>
  readJson<Record<string, string>>(join(launchdDir(env), 'env.json'), {});

/** The job's environment: launchd's, never the caller's (see launchctl.ts's file comment). */
export function jobEnv(env: Env, job: LaunchdJob): Record<string, string> {
  const user = userInfo();
  return {
    ...(jobsOnMac(env) ? { NODE_OPTIONS: AS_DARWIN_NODE_OPTIONS } : {}),
    PATH: domainPath(env),
    HOME: env['HOME'] ?? user.homedir,
    USER: user.username,
    LOGNAME: user.username,
    SHELL: user.shell ?? '/bin/zsh',
    TMPDIR: env['TMPDIR'] ?? '/tmp',
    XPC_SERVICE_NAME: job.label,
    ...domainEnv(env),
    ...job.environment,
  };
}

/** launchd execs `Program` with execvp(3) semantics against the job's PATH. */
function executable(program: string, path: string): string | null {
  const candidates = isAbsolute(program)
    ? [program]
    : program.includes('/')
      ? []
      : path.split(delimiter).map((dir) => join(dir, program));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // next
    }
  }
  return null;
}

export async function startJob(
  env: Env,
  state: LaunchdState,
  service: Service,
): Promise<RunRecord | null> {
  const job = readLaunchdJob(parsePlist(service.plist));
  const environment = jobEnv(env, job);
  const cwd = job.workingDirectory ?? '/';
  const program = executable(job.program, environment['PATH'] ?? LAUNCHD_DEFAULT_PATH);
  const outputs = [job.stdoutPath, job.stderrPath].filter((p): p is string => p !== null);
  if (program === null || !existsSync(cwd) || !outputs.every((p) => existsSync(dirname(p)))) {
    service.spawnFailed = true;
    save(env, state);
    return null;
  }
  delete service.spawnFailed;
  save(env, state);
  const restarts = job.keepAlive !== 'no';
  return startRun(launchdDir(env), launchdRunKey(job.label), {
    command: program,
    args: job.argv.slice(1),
    env: environment,
    cwd,
    newSession: true,
    endProcessGroupWithMain: !job.abandonProcessGroup,
    ...(restarts
      ? {
          restart: {
            onFailure: job.keepAlive !== 'after-success',
            always: job.keepAlive === 'always',
            delayMs: Math.min(job.throttleInterval * 1000, 200),
            max: 5,
          },
        }
      : {}),
    ...(job.startInterval !== null ? { intervalMs: job.startInterval * 1000 } : {}),
    execFailureCode: EX_CONFIG,
    ...(job.stdoutPath ? { log: job.stdoutPath } : {}),
  });
}

/** Sends `name` to `pid` unless it has already ended (a race launchd loses quietly too). */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Ends the job's process (SIGTERM, SIGKILL after ExitTimeOut) and, unless abandoned, its group.
 * A job whose process has already exited — `KeepAlive` about to start it again after
 * `ThrottleInterval`, or its end not yet recorded — has nothing to signal: launchd then only
 * stops it from being started again, and `bootout` and `kickstart -k` succeed (launchctl(1)).
 */
export async function killJob(env: Env, service: Service): Promise<void> {
  const job = readLaunchdJob(parsePlist(service.plist));
  const dir = launchdDir(env);
  const key = launchdRunKey(job.label);
  const run = readRun(dir, key);
  if (!isRunning(run) || run?.pid === null || run === null) return;
  writeFileSync(runPaths(dir, key).stop, '');
  if (processAlive(run.pid)) signal(run.pid, 'SIGTERM');
  const deadline = Date.now() + job.exitTimeout * 1000;
  for (;;) {
    const now = readRun(dir, key);
    if (!isRunning(now)) return;
    if (Date.now() > deadline && processAlive(run.pid)) signal(run.pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
