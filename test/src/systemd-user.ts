/**
 * A real `systemd --user` manager for the suites that test fleet against systemd (contract §12:
 * "the systemd path is tested against a real systemd --user manager"). PID 1 of the build
 * machines is not systemd, but Debian's systemd runs a user manager once it has what a login
 * would give it, and this harness gives it exactly that:
 *
 * 1. a dedicated unprivileged user, `fleet-sdt-<hex>`, made for this test process (`useradd`) and
 *    removed when it ends — its own uid, so two test runs on one machine never share a manager,
 *    and the machine's own users' units are never touched;
 * 2. `/run/user/<uid>`, owned by the user, mode 0700 (`XDG_RUNTIME_DIR`);
 * 3. delegated cgroups: `user.slice/user-<uid>.slice/user@<uid>.service` created in every
 *    hierarchy systemd uses and chowned to the user; the starting shell writes its own pid into
 *    their `cgroup.procs` and then execs `runuser -u <user> -- env … systemd --user`, so the
 *    manager starts inside a subtree it owns (never as root in the machine's root cgroup: a user
 *    manager there adopts every process of the machine into its `init.scope`);
 * 4. the `/run/systemd/system` marker, which systemd checks to decide it was booted with systemd,
 *    only while the manager starts, removed as soon as it answers — apt's maintainer scripts
 *    check the same directory (`.ci/run` installs packages before the tests and removes a
 *    leftover marker). A lock directory serialises the marker window between test processes.
 *
 * Most suites share one manager per test process (`requireSystemdUser`), started on first use and
 * stopped by pid when the process ends (a root `after` hook, and an exit handler as the safety
 * net). A suite that needs several (test/src/netns-host.ts: one per simulated host) starts its own
 * with `startSystemdUser`, each for a user of its own, optionally inside a network namespace
 * (`nsenter --net`, not `ip netns exec`: that one makes a mount namespace and remounts /sys, which
 * hides /sys/fs/cgroup from systemd) and a mount namespace of the caller's with a
 * `/run/systemd/system` of its own (then the marker window of 4. is not needed); those stop with
 * `stop()`, or with the process. A user left over by a test process that was killed is found by
 * its record and removed by the next one.
 *
 * The user needs to run fleet: the packed runtime (the artifact `npm pack -w packages/cli` makes,
 * which runs on its own) is unpacked into the user's home as its CLI, and the node binary is
 * copied there when the user cannot execute the test process's own (CI's Node 24 lives in a 0700
 * temp dir) — so nothing depends on who may read the checkout.
 *
 * Where this cannot work the suites are pending with the reason (not root, no systemd, PID 1 is
 * systemd, cgroups not writable), recorded for `.ci/run` like a missing tool.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  SYSTEM_TOOLS,
  requireSystemTools,
  skipForEnvironment,
  type SkippableContext,
} from '@fleet/testkit';
import { packedRuntimeArtifact } from './artifact.js';

/** Where the harness keeps its users' homes and records (root-owned, 0755). */
export const HARNESS_ROOT = '/var/lib/fleet-systemd-test';
const USER_PREFIX = 'fleet-sdt-';
/** Every harness user's name starts with this (the records of stale users are found by it). */
const HARNESS_USER_PREFIX = 'fleet-';
const MARKER = '/run/systemd/system';
const MARKER_LOCK = '/run/fleet-systemd-test-marker.lock';
const SYSTEMD = SYSTEM_TOOLS.systemd.command;
/** logind's own record of lingering users (what `loginctl enable-linger` creates). */
const LINGER_DIR = '/var/lib/systemd/linger';

export interface UserRun {
  /** -1 when a signal ended it (then `signal` names it). */
  readonly exitCode: number;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface UserRunOptions {
  /** Added to (or overriding) the user's base environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly input?: string;
  readonly timeoutMs?: number;
}

/** The running manager and its user. */
export interface SystemdUser {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
  /** The user's home (`$HOME` of the manager: its units live in `~/.config/systemd/user`). */
  readonly home: string;
  /** `/run/user/<uid>`. */
  readonly runtimeDir: string;
  /** The `systemd --user` process. */
  readonly managerPid: number;
  /** A node binary the user can execute (the test process's own, or a copy in the home). */
  readonly node: string;
  /** The environment a process of the user gets here: HOME, USER, PATH, XDG_RUNTIME_DIR, LANG. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * The network namespace the manager (and every `run`) is in, as a path (`/run/netns/<name>`),
   * or `null` for the machine's own.
   */
  readonly netns: string | null;
  /** The mount namespace the manager (and every `run`) is in, as a path, or `null`. */
  readonly mountns: string | null;
  /**
   * Runs a program as the user (`runuser`, no shell), with the user's environment — inside the
   * manager's network and mount namespaces when it has them.
   */
  run(command: string, args: readonly string[], options?: UserRunOptions): Promise<UserRun>;
  /** `systemctl --user ARGS` as the user. */
  systemctl(...args: string[]): Promise<UserRun>;
  /** `systemctl --user show UNIT -p …` as a map. */
  show(unit: string, properties: readonly string[]): Promise<Record<string, string>>;
  /** The `fleet` entry point of the user's own copy of the packed CLI (unpacked on first use). */
  cli(): Promise<string>;
  /** Runs the user's `fleet ARGS…` as the user (plain output, no update checks). */
  fleet(args: readonly string[], options?: UserRunOptions): Promise<UserRun>;
  /** A new empty directory owned by the user, under its home (`<home>/<prefix>-<hex>`). */
  makeDir(prefix: string): string;
  /** Hands `path` (recursively) to the user. */
  chown(path: string): void;
}

/** A manager of its own (`startSystemdUser`): stop it when done (else it stops with the process). */
export interface OwnedSystemdUser extends SystemdUser {
  /** Stops the manager and removes the user, its home, runtime dir, cgroups and linger record. */
  stop(): Promise<void>;
}

export interface SystemdUserOptions {
  /**
   * The user's name is `<prefix><8 hex>` (default `fleet-sdt-`); it must start with `fleet-` and
   * the whole name fit in 32 characters.
   */
  readonly userPrefix?: string;
  /** Runs the manager (and every `run`) inside this network namespace: a name or a path. */
  readonly netns?: string;
  /**
   * Runs the manager (and every `run`) inside this mount namespace (a path, `/proc/<pid>/ns/mnt`),
   * which must show a `/run/systemd/system` of its own: the machine's marker is then left alone,
   * and `systemctl --user is-system-running` there says `running`, not `offline`.
   */
  readonly mountns?: string;
}

interface UserRecord {
  readonly user: string;
  readonly uid: number;
  /** The test process that made the user: the user is stale once it is gone. */
  readonly ownerPid: number;
  readonly managerPid: number | null;
  readonly cgroups: readonly string[];
  readonly netns?: string | null;
  readonly mountns?: string | null;
}

// ---- what the machine offers ----------------------------------------------------------------

/** Why a user manager cannot be started here, or `null` when it can. */
export function systemdUserProblem(): string | null {
  if (process.platform !== 'linux') return `the machine runs ${process.platform}, not Linux`;
  if (process.getuid?.() !== 0) {
    return 'the real user manager is started for a dedicated test user, which needs root (useradd, runuser, cgroup delegation); run the suite as root';
  }
  const init = readText('/proc/1/comm')?.trim();
  if (init === 'systemd') {
    return 'PID 1 is systemd: this harness starts a user manager only where no system manager runs (CI, containers); on a systemd host the system manager owns user@.service and its cgroups';
  }
  if (cgroupLayout().length === 0)
    return 'no writable cgroup hierarchy for systemd under /sys/fs/cgroup';
  return null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * The cgroup hierarchies systemd uses, as directories whose `user.slice/…` we create: the unified
 * (v2) one — `/sys/fs/cgroup` itself, or `/sys/fs/cgroup/unified` in the hybrid layout — and the
 * named v1 `systemd` hierarchy when mounted.
 */
function cgroupLayout(): string[] {
  const roots: string[] = [];
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) roots.push('/sys/fs/cgroup');
  else {
    if (existsSync('/sys/fs/cgroup/unified/cgroup.procs')) roots.push('/sys/fs/cgroup/unified');
    if (existsSync('/sys/fs/cgroup/systemd/cgroup.procs')) roots.push('/sys/fs/cgroup/systemd');
  }
  return roots;
}

// ---- small process helpers ------------------------------------------------------------------

function runAs(
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<UserRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd ?? '/',
      env: options.env ?? { PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? -1, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** `/run/netns/<name>` for a name, the path itself for a path. */
function netnsPath(netns: string): string {
  return netns.includes('/') ? netns : `/run/netns/${netns}`;
}

/** The namespaces a manager and its user's commands are in (`null`: the machine's own). */
interface Namespaces {
  readonly net: string | null;
  readonly mount: string | null;
}

/**
 * The argv prefix that runs a command inside `ns` (nothing for the machine's own). Entering a
 * mount namespace moves the working directory to its root: `cwd` is set again inside.
 */
function inNamespaces(ns: Namespaces, cwd = '/'): string[] {
  if (ns.net === null && ns.mount === null) return [];
  return [
    'nsenter',
    ...(ns.net === null ? [] : [`--net=${ns.net}`]),
    ...(ns.mount === null ? [] : [`--mount=${ns.mount}`, `--wd=${cwd}`]),
    '--',
  ];
}

/** `runAs` of `command ARGS` inside `ns`. */
function runIn(
  ns: Namespaces,
  command: string,
  args: readonly string[],
  options: Parameters<typeof runAs>[2] = {},
): Promise<UserRun> {
  const prefix = inNamespaces(ns, options.cwd);
  return prefix.length === 0
    ? runAs(command, args, options)
    : runAs(prefix[0] as string, [...prefix.slice(1), command, ...args], options);
}

function must(command: string, args: readonly string[]): string {
  return execFileSync(command, [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Alive and not a zombie. */
function alive(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return false;
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** Every live process of `uid` (by /proc's real uid). */
function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const status = readText(`/proc/${name}/status`);
    const real = /^Uid:\s+(\d+)/m.exec(status ?? '')?.[1];
    if (real !== undefined && Number(real) === uid && alive(Number(name))) pids.push(Number(name));
  }
  return pids;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/** Blocking sleep for the exit handler, where nothing asynchronous runs. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// ---- the marker window ----------------------------------------------------------------------

/** Takes the marker lock (a directory holding its owner's pid), taking over a dead owner's. */
async function lockMarker(): Promise<() => void> {
  const until = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(MARKER_LOCK, { mode: 0o700 });
      writeFileSync(join(MARKER_LOCK, 'owner'), `${process.pid}\n`);
      return () => rmSync(MARKER_LOCK, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(readText(join(MARKER_LOCK, 'owner'))?.trim());
    if (!Number.isInteger(owner) || owner <= 0 || !alive(owner)) {
      // A holder that died (or one that has not written its pid yet: give it a moment).
      await sleep(200);
      const again = Number(readText(join(MARKER_LOCK, 'owner'))?.trim());
      if (!Number.isInteger(again) || again <= 0 || !alive(again)) {
        rmSync(MARKER_LOCK, { recursive: true, force: true });
        continue;
      }
    }
    if (Date.now() > until) throw new Error(`${MARKER_LOCK} is held by pid ${owner} for 2 minutes`);
    await sleep(100);
  }
}

// ---- users: make, record, remove ------------------------------------------------------------

const recordPath = (user: string) => join(HARNESS_ROOT, `${user}.json`);

function writeRecord(record: UserRecord): void {
  writeFileSync(recordPath(record.user), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** Removes a harness user and everything it had: processes (by pid), cgroups, dirs, linger. */
function removeUser(record: UserRecord): void {
  const { user, uid } = record;
  if (record.managerPid !== null && alive(record.managerPid)) {
    signal(record.managerPid, 'SIGTERM');
    for (let waited = 0; waited < 15_000 && alive(record.managerPid); waited += 100) sleepSync(100);
  }
  for (let round = 0; round < 3; round += 1) {
    const left = processesOf(uid);
    if (left.length === 0) break;
    for (const pid of left) signal(pid, 'SIGKILL');
    sleepSync(200);
  }
  for (const root of record.cgroups) {
    const slice = join(root, 'user.slice', `user-${uid}.slice`);
    // Depth first: a cgroup directory is removed with rmdir once it holds no processes.
    spawnSync('find', [slice, '-depth', '-type', 'd', '-exec', 'rmdir', '{}', ';'], {
      stdio: 'ignore',
    });
    try {
      rmdirSync(join(root, 'user.slice'));
    } catch {
      // another harness user's slice is still there, or it was never ours
    }
  }
  rmSync(`/run/user/${uid}`, { recursive: true, force: true });
  rmSync(join(LINGER_DIR, user), { force: true });
  const home = join(HARNESS_ROOT, user);
  spawnSync('chmod', ['-R', 'u+w', home], { stdio: 'ignore' });
  rmSync(home, { recursive: true, force: true });
  spawnSync('userdel', [user], { stdio: 'ignore' });
  rmSync(recordPath(user), { force: true });
  rmSync(join(HARNESS_ROOT, `${user}.log`), { force: true });
}

/** Users left by test processes that are gone. */
function removeStaleUsers(): void {
  for (const name of readdirSync(HARNESS_ROOT)) {
    if (!name.startsWith(HARNESS_USER_PREFIX) || !name.endsWith('.json')) continue;
    let record: UserRecord;
    try {
      record = JSON.parse(readFileSync(join(HARNESS_ROOT, name), 'utf8')) as UserRecord;
    } catch {
      continue;
    }
    if (typeof record.uid !== 'number' || !record.user?.startsWith(HARNESS_USER_PREFIX)) continue;
    if (!alive(record.ownerPid)) removeUser(record);
  }
}

// ---- the manager ----------------------------------------------------------------------------

function userEnv(user: string, uid: number, home: string, node: string): Record<string, string> {
  return {
    HOME: home,
    USER: user,
    LOGNAME: user,
    PATH: [dirname(node), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    XDG_RUNTIME_DIR: `/run/user/${uid}`,
    LANG: 'C.UTF-8',
  };
}

function envArgs(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).map(([key, value]) => `${key}=${value}`);
}

/** Whether `user` can execute `path` (every directory on the way included). */
async function executableBy(user: string, path: string): Promise<boolean> {
  const tested = await runAs('runuser', ['-u', user, '--', 'test', '-x', path]);
  return tested.exitCode === 0;
}

/** `useradd`/`userdel` lock /etc/passwd: another test process may hold it for a moment. */
async function mustRetrying(command: string, args: readonly string[]): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return must(command, args);
    } catch (error) {
      const stderr = (error as { stderr?: Buffer | string }).stderr?.toString() ?? '';
      if (attempt >= 50 || !/lock|try again/i.test(stderr)) throw error;
      await sleep(100);
    }
  }
}

async function startManager(options: SystemdUserOptions = {}): Promise<SystemdUser> {
  mkdirSync(HARNESS_ROOT, { recursive: true, mode: 0o755 });
  chmodSync(HARNESS_ROOT, 0o755);
  removeStaleUsers();
  const prefix = options.userPrefix ?? USER_PREFIX;
  if (!prefix.startsWith(HARNESS_USER_PREFIX) || prefix.length + 8 > 32) {
    throw new Error(`user prefix ${prefix}: must start with ${HARNESS_USER_PREFIX}, ≤ 24 chars`);
  }
  const netns = options.netns === undefined ? null : netnsPath(options.netns);
  const mountns = options.mountns ?? null;
  const ns: Namespaces = { net: netns, mount: mountns };
  const user = `${prefix}${randomBytes(4).toString('hex')}`;
  const home = join(HARNESS_ROOT, user);
  const { uid, gid } = await createUser(user, home);
  const cgroups = cgroupLayout();
  let record: UserRecord = {
    user,
    uid,
    ownerPid: process.pid,
    managerPid: null,
    cgroups,
    netns,
    mountns,
  };
  writeRecord(record);
  owned.set(user, record);
  try {
    prepareSession(user, uid, gid, home);
    const node = await nodeFor(user, uid, gid, home);
    const env = userEnv(user, uid, home, node);
    const procs = delegateCgroups(cgroups, uid, gid);

    const log = join(HARNESS_ROOT, `${user}.log`);
    // A mount namespace of the caller's has its own marker: the machine's is left alone.
    const unlockMarker = mountns === null ? await lockMarker() : () => undefined;
    const ownMarker = mountns === null && !existsSync(MARKER);
    try {
      if (ownMarker) mkdirSync(MARKER, { recursive: true });
      const launcher = launchManager(user, env, procs, log, ns);
      const managerPid = await waitForManager(user, env, launcher, log, ns);
      record = { ...record, managerPid };
      writeRecord(record);
      owned.set(user, record);
    } finally {
      if (ownMarker) rmSync(MARKER, { recursive: true, force: true });
      unlockMarker();
    }
    return systemdUser(record, home, node, env);
  } catch (error) {
    owned.delete(user);
    removeUser(record);
    throw error;
  }
}

/** The harness user, made with a shell and no password (not locked); its uid and gid. */
async function createUser(user: string, home: string): Promise<{ uid: number; gid: number }> {
  // A shell: sshd runs a forced command through the user's shell (the SSH recovery tests).
  await mustRetrying('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    home,
    '--shell',
    '/bin/sh',
    user,
  ]);
  // No password, but not a locked account ("!"): sshd refuses a locked one even for a key.
  must('usermod', ['--password', '*', user]);
  const uid = Number(must('id', ['-u', user]).trim());
  const gid = Number(must('id', ['-g', user]).trim());
  return { uid, gid };
}

/** The user's home, its runtime directory and its linger mark, as a login would leave them. */
function prepareSession(user: string, uid: number, gid: number, home: string): void {
  mkdirSync(home, { mode: 0o755 });
  chownSync(home, uid, gid);
  const runtimeDir = `/run/user/${uid}`;
  mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
  chmodSync(runtimeDir, 0o700);
  chownSync(runtimeDir, uid, gid);
  // What `loginctl enable-linger` records (no logind runs here to ask).
  mkdirSync(LINGER_DIR, { recursive: true, mode: 0o755 });
  writeFileSync(join(LINGER_DIR, user), '');
}

/** This process's node, or a copy in the user's home when the user cannot execute it. */
async function nodeFor(user: string, uid: number, gid: number, home: string): Promise<string> {
  if (await executableBy(user, process.execPath)) return process.execPath;
  const node = join(home, 'bin', 'node');
  mkdirSync(dirname(node), { recursive: true });
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  chownSync(dirname(node), uid, gid);
  chownSync(node, uid, gid);
  return node;
}

/** The user's `user@UID.service` cgroup in each hierarchy, owned by the user; their procs files. */
function delegateCgroups(cgroups: readonly string[], uid: number, gid: number): string[] {
  const procs: string[] = [];
  for (const root of cgroups) {
    const dir = join(root, 'user.slice', `user-${uid}.slice`, `user@${uid}.service`);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw Object.assign(new Error(`cannot create ${dir}: ${(error as Error).message}`), {
        cgroupProblem: true,
      });
    }
    spawnSync('chown', ['-R', `${uid}:${gid}`, dir], { stdio: 'ignore' });
    procs.push(join(dir, 'cgroup.procs'));
  }
  return procs;
}

/** Starts `systemd --user` for the user, detached, its output in `log`; the launcher's pid. */
function launchManager(
  user: string,
  env: Record<string, string>,
  procs: readonly string[],
  log: string,
  ns: Namespaces,
): number {
  const fd = openSync(log, 'a', 0o600);
  try {
    // The shell moves itself into the delegated cgroups, then becomes runuser, whose child
    // is the manager (so the manager starts inside the subtree its user owns).
    // Inside a namespace, nsenter execs the shell: the launcher's pid stays the same.
    const launch = [
      ...inNamespaces(ns),
      'sh',
      '-c',
      'count=$1; shift; while [ "$count" -gt 0 ]; do echo $$ > "$1" || exit 97; shift; count=$((count - 1)); done; exec runuser -u "$FLEET_SDT_USER" -- env -i "$@"',
      'sh',
      String(procs.length),
      ...procs,
      ...envArgs(env),
      SYSTEMD,
      '--user',
    ];
    const child = spawn(launch[0] as string, launch.slice(1), {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: '/',
      env: {
        PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
        FLEET_SDT_USER: user,
      },
    });
    child.unref();
    return child.pid as number;
  } finally {
    closeSync(fd);
  }
}

/** Waits until `systemctl --user` answers (running or degraded); returns the manager's pid. */
async function waitForManager(
  user: string,
  env: Record<string, string>,
  launcher: number,
  log: string,
  ns: Namespaces,
): Promise<number> {
  const until = Date.now() + 30_000;
  let last = '';
  for (;;) {
    const state = await runIn(ns, 'runuser', [
      '-u',
      user,
      '--',
      'env',
      '-i',
      ...envArgs(env),
      'systemctl',
      '--user',
      'is-system-running',
    ]);
    last = `${state.stdout}${state.stderr}`.trim();
    if (/^(running|degraded)$/m.test(state.stdout)) break;
    if (!alive(launcher) || Date.now() > until) {
      throw new Error(
        `systemd --user for ${user} did not come up (${last}); its log:\n${readText(log) ?? ''}`,
      );
    }
    await sleep(100);
  }
  const children = readText(`/proc/${launcher}/task/${launcher}/children`)?.trim().split(/\s+/);
  const manager = (children ?? [])
    .map(Number)
    .find((pid) => readText(`/proc/${pid}/comm`)?.trim() === 'systemd');
  if (manager === undefined) throw new Error(`no systemd child of runuser ${launcher}`);
  return manager;
}

function systemdUser(
  record: UserRecord,
  home: string,
  node: string,
  env: Readonly<Record<string, string>>,
): SystemdUser {
  const { user, uid } = record;
  const gid = statSync(home).gid;
  let cliPath: Promise<string> | undefined;
  const netns = record.netns ?? null;
  const mountns = record.mountns ?? null;
  const run = (command: string, args: readonly string[], options: UserRunOptions = {}) =>
    runIn(
      { net: netns, mount: mountns },
      'runuser',
      ['-u', user, '--', 'env', '-i', ...envArgs({ ...env, ...options.env }), command, ...args],
      {
        cwd: options.cwd ?? home,
        ...(options.input === undefined ? {} : { input: options.input }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
    );
  const chown = (path: string) => {
    spawnSync('chown', ['-R', `${uid}:${gid}`, path], { stdio: 'ignore' });
  };
  const self: SystemdUser = {
    user,
    uid,
    gid,
    home,
    runtimeDir: `/run/user/${uid}`,
    managerPid: record.managerPid as number,
    node,
    env,
    netns,
    mountns,
    run,
    systemctl: (...args: string[]) => run('systemctl', ['--user', ...args]),
    show: (unit, properties) => showUnit(run, unit, properties),
    cli() {
      cliPath ??= unpackCli(home, run, chown);
      return cliPath;
    },
    async fleet(args, options = {}) {
      const bin = await self.cli();
      return run(node, [bin, ...args], {
        ...options,
        env: {
          OCLIF_SKIP_NEW_VERSION_CHECK: 'true',
          NO_COLOR: '1',
          FORCE_COLOR: '0',
          ...options.env,
        },
      });
    },
    makeDir(prefix) {
      const dir = join(home, `${prefix}-${randomBytes(4).toString('hex')}`);
      mkdirSync(dir, { mode: 0o755 });
      chownSync(dir, uid, gid);
      return dir;
    },
    chown,
  };
  return self;
}

/** `systemctl --user show UNIT` of `properties`, as a map. */
async function showUnit(
  run: SystemdUser['run'],
  unit: string,
  properties: readonly string[],
): Promise<Record<string, string>> {
  const shown = await run('systemctl', [
    '--user',
    'show',
    unit,
    `--property=${properties.join(',')}`,
  ]);
  const out: Record<string, string> = {};
  for (const line of shown.stdout.split('\n')) {
    const equals = line.indexOf('=');
    if (equals > 0) out[line.slice(0, equals)] = line.slice(equals + 1);
  }
  return out;
}

/** The packed runtime's CLI unpacked in the user's home, as the user; its `bin/run.js`. */
async function unpackCli(
  home: string,
  run: SystemdUser['run'],
  chown: (path: string) => void,
): Promise<string> {
  const artifact = await packedRuntimeArtifact();
  const dir = join(home, 'cli');
  mkdirSync(dir, { recursive: true });
  const tgz = join(dir, 'fleet-cli.tgz');
  copyFileSync(artifact.path, tgz);
  chown(dir);
  const unpacked = await run('tar', ['-xzf', tgz, '-C', dir]);
  if (unpacked.exitCode !== 0) throw new Error(`unpacking the CLI: ${unpacked.stderr}`);
  return join(dir, 'package', 'bin', 'run.js');
}

// ---- one manager per test process -----------------------------------------------------------

/** Every user this process made and has not removed yet, by name (for the exit handler). */
const owned = new Map<string, UserRecord>();

let shared: Promise<SystemdUser> | undefined;
let sharedRecord: (() => UserRecord | null) | undefined;

function stopShared(): void {
  const record = sharedRecord?.();
  sharedRecord = undefined;
  shared = undefined;
  if (record) {
    owned.delete(record.user);
    removeUser(record);
  }
}

/** The safety net: whatever this process still has when it exits. */
function stopAll(): void {
  stopShared();
  for (const record of [...owned.values()]) {
    owned.delete(record.user);
    removeUser(record);
  }
}

process.once('exit', stopAll);
// A root hook when this module is loaded with the test files: the manager stops with the run.
if (typeof after === 'function') after(stopShared);

/** The tools a user manager needs (the suite is pending, naming the package, when one is missing). */
export const SYSTEMD_USER_TOOLS = [
  SYSTEM_TOOLS.systemd,
  SYSTEM_TOOLS.systemctl,
  SYSTEM_TOOLS.systemdRun,
  SYSTEM_TOOLS.runuser,
  SYSTEM_TOOLS.useradd,
  SYSTEM_TOOLS.usermod,
  SYSTEM_TOOLS.userdel,
] as const;

/**
 * In a `before` hook: a new user manager of its own (for a new user, optionally inside a network
 * namespace), or the suite is pending with the reason why this machine cannot run one. Stop it
 * with `stop()` (an `after` hook); the process exit handler removes what is left.
 */
export async function startSystemdUser(
  context: SkippableContext,
  options: SystemdUserOptions = {},
): Promise<OwnedSystemdUser> {
  requireSystemdUserEnvironment(context);
  let started: SystemdUser;
  try {
    started = await startManager(options);
  } catch (error) {
    skipForCgroups(context, error);
    throw error;
  }
  let stopped = false;
  return {
    ...started,
    stop() {
      if (!stopped) {
        stopped = true;
        const record = owned.get(started.user);
        owned.delete(started.user);
        if (record) removeUser(record);
      }
      return Promise.resolve();
    },
  };
}

/** Pending (tools, root, PID 1, cgroups) unless a user manager can run here. */
function requireSystemdUserEnvironment(context: SkippableContext): void {
  requireSystemTools(context, SYSTEMD_USER_TOOLS, 'runs against a real systemd --user manager');
  const problem = systemdUserProblem();
  if (problem !== null) {
    skipForEnvironment(context, `runs against a real systemd --user manager: ${problem}`, [
      'systemd',
    ]);
  }
}

function skipForCgroups(context: SkippableContext, error: unknown): void {
  if ((error as { cgroupProblem?: boolean }).cgroupProblem) {
    skipForEnvironment(
      context,
      `runs against a real systemd --user manager: the cgroups cannot be delegated (${(error as Error).message})`,
      ['systemd'],
    );
  }
}

/**
 * In a `before` hook: the running user manager (started on first use), or the suite is pending
 * with the reason why this machine cannot run one.
 */
export async function requireSystemdUser(context: SkippableContext): Promise<SystemdUser> {
  requireSystemdUserEnvironment(context);
  if (!shared) {
    shared = startManager();
    shared
      .then((started) => {
        sharedRecord = () =>
          JSON.parse(readFileSync(recordPath(started.user), 'utf8')) as UserRecord;
      })
      .catch(() => {
        shared = undefined;
      });
  }
  try {
    return await shared;
  } catch (error) {
    skipForCgroups(context, error);
    throw error;
  }
}
