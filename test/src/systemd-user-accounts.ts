/**
 * The harness's dedicated Unix users (systemd-user.ts, steps 1 and 2): made (`useradd`, a home, a
 * `/run/user/<uid>`, a linger mark, a node it can execute), recorded under HARNESS_ROOT so a
 * later test process finds what a killed one left, and removed with everything they had —
 * processes by pid, cgroups, directories, the record. Also the users this process still owns,
 * for its exit handler. Apart from the manager's launch (systemd-user-launch.ts): a user is made
 * before its manager starts and removed whether or not it ever ran.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { alive, must, processesOf, runAs, signal, sleepSync } from './processes.js';
import { removeUserCgroups } from './systemd-user-cgroups.js';

/** Where the harness keeps its users' homes and records (root-owned, 0755). */
export const HARNESS_ROOT = '/var/lib/fleet-systemd-test';
/** Every harness user's name starts with this (the records of stale users are found by it). */
export const HARNESS_USER_PREFIX = 'fleet-';
/** logind's own record of lingering users (what `loginctl enable-linger` creates). */
const LINGER_DIR = '/var/lib/systemd/linger';

export interface UserRecord {
  readonly user: string;
  readonly uid: number;
  /** The test process that made the user: the user is stale once it is gone. */
  readonly ownerPid: number;
  readonly managerPid: number | null;
  readonly cgroups: readonly string[];
  readonly netns?: string | null;
  readonly mountns?: string | null;
}

// ---- users: make, record, remove ------------------------------------------------------------

export const recordPath = (user: string) => join(HARNESS_ROOT, `${user}.json`);

export function writeRecord(record: UserRecord): void {
  writeFileSync(recordPath(record.user), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** Removes a harness user and everything it had: processes (by pid), cgroups, dirs, linger. */
export function removeUser(record: UserRecord): void {
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
  removeUserCgroups(record.cgroups, uid);
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
export function removeStaleUsers(): void {
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

/** Every user this process made and has not removed yet, by name (for the exit handler). */
export const owned = new Map<string, UserRecord>();

// ---- a user as a login would leave it -------------------------------------------------------

export function userEnv(
  user: string,
  uid: number,
  home: string,
  node: string,
): Record<string, string> {
  return {
    HOME: home,
    USER: user,
    LOGNAME: user,
    PATH: [dirname(node), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    XDG_RUNTIME_DIR: `/run/user/${uid}`,
    LANG: 'C.UTF-8',
  };
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

/** The harness user, made with a shell and no password (not locked); its uid and gid. */
export async function createUser(
  user: string,
  home: string,
): Promise<{ uid: number; gid: number }> {
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
export function prepareSession(user: string, uid: number, gid: number, home: string): void {
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
export async function nodeFor(
  user: string,
  uid: number,
  gid: number,
  home: string,
): Promise<string> {
  if (await executableBy(user, process.execPath)) return process.execPath;
  const node = join(home, 'bin', 'node');
  mkdirSync(dirname(node), { recursive: true });
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  chownSync(dirname(node), uid, gid);
  chownSync(node, uid, gid);
  return node;
}
