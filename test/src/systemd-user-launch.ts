/**
 * Starting a harness user's `systemd --user` manager (systemd-user.ts, steps 3 and 4): a new user
 * (systemd-user-accounts.ts) with its cgroups delegated (systemd-user-cgroups.ts), the launcher
 * shell that moves into them and execs `runuser … systemd --user` (inside the caller's network and
 * mount namespaces when given), the `/run/systemd/system` marker window and its lock, and the
 * wait until `systemctl --user` answers. Whoever keeps the manager — the shared one or a suite's
 * own — lives in systemd-user.ts; this module only brings one up and hands back its handle.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SYSTEM_TOOLS } from '@fleet/testkit';
import {
  alive,
  envArgs,
  inNamespaces,
  netnsPath,
  readText,
  runIn,
  type Namespaces,
} from './processes.js';
import {
  HARNESS_ROOT,
  HARNESS_USER_PREFIX,
  createUser,
  nodeFor,
  owned,
  prepareSession,
  removeStaleUsers,
  removeUser,
  userEnv,
  writeRecord,
  type UserRecord,
} from './systemd-user-accounts.js';
import { cgroupLayout, delegateCgroups } from './systemd-user-cgroups.js';
import { systemdUser, type SystemdUser } from './systemd-user-handle.js';

const USER_PREFIX = 'fleet-sdt-';
const MARKER = '/run/systemd/system';
const MARKER_LOCK = '/run/fleet-systemd-test-marker.lock';
const SYSTEMD = SYSTEM_TOOLS.systemd.command;

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

// ---- the manager ----------------------------------------------------------------------------

export async function startManager(options: SystemdUserOptions = {}): Promise<SystemdUser> {
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
