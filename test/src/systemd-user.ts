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
 *
 * This module keeps the managers a test process holds (the shared one, the owned ones, the exit
 * handler) and the two entry points; the rest is in siblings, re-exported here for the suites:
 * processes.ts (running programs, in namespaces, and /proc), systemd-user-preconditions.ts
 * (whether this machine can, the pending reasons), systemd-user-accounts.ts (the users: made,
 * recorded, removed), systemd-user-cgroups.ts (the delegated cgroups), systemd-user-launch.ts
 * (the manager's start, the marker window, the wait) and systemd-user-handle.ts (`SystemdUser`,
 * what a suite holds).
 */
import { readFileSync } from 'node:fs';
import type { SkippableContext } from '@fleet/testkit';
import { owned, recordPath, removeUser, type UserRecord } from './systemd-user-accounts.js';
import type { SystemdUser } from './systemd-user-handle.js';
import { startManager, type SystemdUserOptions } from './systemd-user-launch.js';
import { requireSystemdUserEnvironment, skipForCgroups } from './systemd-user-preconditions.js';

export type { UserRun } from './processes.js';
export { HARNESS_ROOT } from './systemd-user-accounts.js';
export type { SystemdUser, UserRunOptions } from './systemd-user-handle.js';
export type { SystemdUserOptions } from './systemd-user-launch.js';
export { SYSTEMD_USER_TOOLS, systemdUserProblem } from './systemd-user-preconditions.js';

/** A manager of its own (`startSystemdUser`): stop it when done (else it stops with the process). */
export interface OwnedSystemdUser extends SystemdUser {
  /** Stops the manager and removes the user, its home, runtime dir, cgroups and linger record. */
  stop(): Promise<void>;
}

// ---- one manager per test process -----------------------------------------------------------

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
// Removing the user waits for its processes to end, which a loaded machine can stretch past
// mocha's default timeout.
if (typeof after === 'function') {
  after(function () {
    this.timeout(120_000);
    stopShared();
  });
}

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
