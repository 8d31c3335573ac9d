/**
 * The user's login PATH, learned by the node itself (docs/version.md, "The PATH tools are probed
 * on"): a controller runs as a service whose PATH is its supervisor's (systemd's, launchd's), not
 * the one the user's shell builds from `/etc/profile`, `~/.profile`, `~/.zprofile`… — tools and
 * shadowing must be judged on the PATH the user actually runs with.
 *
 * Where and when: the controller learns it itself, on its first `fleet version` read after start
 * and again on the first read once it is older than {@link LOGIN_PATH_MAX_AGE_MS} (a failure is
 * retried after {@link LOGIN_PATH_RETRY_MS}). Nothing a request carries chooses the shell, its
 * arguments or the result (ADR 0005, the node decides): the shell is the one of the user's passwd
 * entry, and the node policy's `versions.path`, when written, wins over what is learned. It is
 * kept in memory only: a restart learns it afresh.
 *
 * How: `<shell> -l -c 'echo M; printenv PATH; echo M'` with a fresh random marker M, stdin
 * closed, a minimal environment (HOME, USER, LOGNAME, SHELL, the login(1) default PATH, LANG,
 * TERM=dumb) that carries no secret, and a bounded time. What rc files print around the
 * markers is ignored. On macOS the login shell (zsh) runs `/etc/zprofile`, whose `path_helper`
 * builds the PATH Terminal sessions get; then `launchctl getenv PATH` (what GUI-launched
 * applications and agents get, when set) adds its directories after the login shell's, which win.
 * Windows has no login shell: its user's PATH is the registry's, the machine's Path then the
 * user's (user-path.ts), read with `reg query`. The answer's source stays `login-shell` there —
 * "the user's login PATH" — and its `detail` names where it came from.
 */
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import {
  createEnvChainLoader,
  type Clock,
  type Platform,
  type ProcessRunner,
} from '@fleet/core/node';
import { ExecaProcessRunner, currentPlatform } from '../context.js';
import { pathDirectories } from './collect.js';
import {
  MACHINE_ENVIRONMENT_KEY,
  USER_ENVIRONMENT_KEY,
  joinPaths,
  parseLaunchctlGetenv,
  parseRegQuery,
  registryText,
} from './user-path.js';

/** The login shell is killed after this long (a profile waiting on a network mount). */
export const LOGIN_PATH_TIMEOUT_MS = 5_000;
/** A learned login PATH is learned again on the first read after this long. */
export const LOGIN_PATH_MAX_AGE_MS = 60 * 60_000;
/** A failed learning is tried again on the first read after this long. */
export const LOGIN_PATH_RETRY_MS = 5 * 60_000;
/**
 * The PATH the login shell starts with, as login(1) sets it (`_PATH_DEFPATH`) before the
 * profiles run.
 */
export const LOGIN_DEFAULT_PATH = '/usr/bin:/bin';

/** The account whose login PATH is learned: the controller's own user. */
export interface LoginAccount {
  readonly username: string;
  /** Its passwd entry's shell (`null` on Windows: no login shell there). */
  readonly shell: string | null;
}

/** The controller's user from its passwd entry (an empty shell field is /bin/sh, passwd(5)). */
export function currentAccount(platform: Platform): LoginAccount {
  const info = userInfo();
  if (platform === 'win32') return { username: info.username, shell: null };
  return { username: info.username, shell: info.shell || '/bin/sh' };
}

export type Learned =
  /** The login shell told it. */
  | {
      readonly source: 'login-shell';
      readonly path: string;
      readonly learnedAt: string;
      readonly detail: string;
    }
  /** It could not be learned (`detail`: why): the controller's own PATH stands in. */
  | { readonly source: 'controller'; readonly detail: string };

/**
 * The one line between the two marker lines, or `null`: output a profile prints before the
 * first marker (a banner, `echo` in `.bash_profile`) or after the second is not the PATH.
 */
export function markedLine(stdout: string, marker: string): string | null {
  const lines = stdout.split(/\r?\n/);
  const first = lines.indexOf(marker);
  if (first === -1 || lines[first + 2] !== marker) return null;
  const line = lines[first + 1] ?? '';
  return line === '' ? null : line;
}

export interface LearnInput {
  readonly platform: Platform;
  /** The node's home: the login shell's HOME (its profiles are read from there). */
  readonly home: string;
  readonly account: LoginAccount;
  readonly processes: ProcessRunner;
  readonly timeoutMs: number;
  readonly now: () => Date;
  /** What REG_EXPAND_SZ values expand from on Windows (default: the controller's own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The user's login PATH from its login shell, or why not (never throws). */
export async function learnLoginPath(input: LearnInput): Promise<Learned> {
  const { shell, username } = input.account;
  if (shell === null) return learnWindowsPath(input);
  const marker = `fleet-path-${randomBytes(12).toString('hex')}`;
  const env = {
    HOME: input.home,
    USER: username,
    LOGNAME: username,
    SHELL: shell,
    PATH: LOGIN_DEFAULT_PATH,
    LANG: process.env['LANG'] || 'C.UTF-8',
    TERM: 'dumb',
  };
  const failed = (why: string): Learned => ({
    source: 'controller',
    detail: `${why}: the controller's PATH is used`,
  });
  let result;
  try {
    result = await input.processes.run({
      command: shell,
      args: ['-l', '-c', `echo ${marker}; printenv PATH; echo ${marker}`],
      env,
      timeoutMs: input.timeoutMs,
    });
  } catch (error) {
    return failed(`could not run the login shell ${shell}: ${(error as Error).message}`);
  }
  if (result.timedOut) {
    return failed(`the login shell ${shell} -l did not answer within ${input.timeoutMs} ms`);
  }
  const line = markedLine(result.stdout, marker);
  if (result.exitCode !== 0 || line === null) {
    const said = result.stderr.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
    const why =
      result.exitCode === -1
        ? 'could not be started'
        : result.exitCode !== 0
          ? `exited ${result.exitCode}`
          : 'printed no PATH';
    return failed(`the login shell ${shell} -l ${why}${said ? ` (${said.trim()})` : ''}`);
  }
  if (pathDirectories(line, input.platform).length === 0) {
    return failed(`the login shell ${shell} -l has no absolute directory on its PATH`);
  }
  const launchd = input.platform === 'darwin' ? await launchdPath(input) : null;
  return {
    source: 'login-shell',
    path: launchd === null ? line : joinPaths(line, launchd, ':'),
    learnedAt: input.now().toISOString(),
    detail:
      launchd === null
        ? `learned from ${shell} -l`
        : `learned from ${shell} -l, then launchctl getenv PATH`,
  };
}

/** `launchctl getenv PATH` on a Mac, or `null` when launchd sets none or cannot say. */
async function launchdPath(input: LearnInput): Promise<string | null> {
  const result = await input.processes
    .run({ command: 'launchctl', args: ['getenv', 'PATH'], timeoutMs: input.timeoutMs })
    .catch(() => null);
  if (result === null || result.timedOut || result.exitCode !== 0) return null;
  const path = parseLaunchctlGetenv(result.stdout);
  return path !== null && pathDirectories(path, 'darwin').length > 0 ? path : null;
}

/** A `Path` value from `reg query`: its text, `''` when the key has none, `null` unreadable. */
async function registryPath(input: LearnInput, key: string): Promise<string | null> {
  const result = await input.processes
    .run({ command: 'reg', args: ['query', key, '/v', 'Path'], timeoutMs: input.timeoutMs })
    .catch(() => null);
  if (result === null || result.timedOut) return null;
  // reg.exe exits 1 with "ERROR: The system was unable to find the specified registry key or
  // value." when the value does not exist (a user who never set a Path of their own).
  if (result.exitCode === 1 && /unable to find/i.test(result.stderr)) return '';
  if (result.exitCode !== 0) return null;
  const value = parseRegQuery(result.stdout, key, 'Path');
  return value === null ? null : registryText(value, input.env ?? process.env);
}

/** The Windows user's PATH as a logon builds it: the machine's Path, then the user's. */
async function learnWindowsPath(input: LearnInput): Promise<Learned> {
  const machine = await registryPath(input, MACHINE_ENVIRONMENT_KEY);
  const user = await registryPath(input, USER_ENVIRONMENT_KEY);
  if (machine === null || user === null) {
    return {
      source: 'controller',
      detail: `reg query ${machine === null ? MACHINE_ENVIRONMENT_KEY : USER_ENVIRONMENT_KEY} /v Path gave no Path fleet could read: the controller's PATH is used`,
    };
  }
  const path = joinPaths(machine, user, ';');
  if (pathDirectories(path, 'win32').length === 0) {
    return {
      source: 'controller',
      detail: "the registry's Path has no absolute directory: the controller's PATH is used",
    };
  }
  return {
    source: 'login-shell',
    path,
    learnedAt: input.now().toISOString(),
    detail: `learned from the registry: the machine's Path, then ${USER_ENVIRONMENT_KEY}'s`,
  };
}

/**
 * The learned login PATH of a running controller: learned on first use, again once stale; one
 * learning at a time (concurrent reads wait for the same one).
 */
export class LoginPathCache {
  private current: { readonly learned: Learned; readonly at: number } | undefined;
  private pending: Promise<Learned> | undefined;

  constructor(
    private readonly learn: () => Promise<Learned>,
    private readonly clock: Clock,
  ) {}

  async get(): Promise<Learned> {
    const now = this.clock.now().getTime();
    if (this.current) {
      const { learned, at } = this.current;
      const maxAge = learned.source === 'login-shell' ? LOGIN_PATH_MAX_AGE_MS : LOGIN_PATH_RETRY_MS;
      if (now - at < maxAge) return learned;
    }
    this.pending ??= this.learn()
      .then((learned) => {
        this.current = { learned, at: this.clock.now().getTime() };
        return learned;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}

/** A controller's cache: its user's login shell, run through the node's process runner. */
export function loginPathCacheFor(home: string, clock: Clock): LoginPathCache {
  const platform = currentPlatform();
  const processes = new ExecaProcessRunner(home, { secrets: createEnvChainLoader(home) });
  return new LoginPathCache(
    () =>
      learnLoginPath({
        platform,
        home,
        account: currentAccount(platform),
        processes,
        timeoutMs: LOGIN_PATH_TIMEOUT_MS,
        now: () => clock.now(),
      }),
    clock,
  );
}
