/**
 * Hosts that are not loopback, for the suites that need more than one machine (`fleet host add`):
 * each host is a network namespace this test process makes, with real parts inside it —
 *
 * 1. `ip netns add fleet-<hex>-<name>` (`<hex>` is this test process's) and a veth pair: the root
 *    side `fleet<n>` gets `10.231.<n>.1/24`, the namespace side `eth0` gets `10.231.<n>.2/24` (the
 *    host's address), both up, and `lo` up inside. `<n>` is claimed machine-wide (a directory
 *    `/run/fleet-netns-test/<n>`, made atomically) so concurrent test processes never share a
 *    subnet. The namespace has no default route: the only traffic is between the root namespace
 *    and the host, over its veth — one host cannot reach another.
 * 2. A mount namespace of the host's, held by a `sleep` inside the netns (`unshare --mount
 *    --propagation slave`: the machine's mounts show in it, its own do not leak out), whose only
 *    difference is `/run/systemd/system`, the "booted with systemd" marker: there
 *    `systemctl --user is-system-running` says `running` as on a workstation (without the marker
 *    it says `offline`), while the machine's /run, which apt checks, is left alone.
 * 3. A dedicated unprivileged user `fleet-h-<name>-<hex>` with its own real `systemd --user`
 *    manager started inside both namespaces (test/src/systemd-user.ts `startSystemdUser`, which
 *    enters them with `nsenter --net --mount`; never `ip netns exec`, which would remount /sys
 *    and hide /sys/fs/cgroup from systemd), lingering like a logged-in workstation user.
 * 4. A real OpenSSH server inside the namespaces on `<address>:22`, with a fresh ed25519 host key,
 *    only public-key auth, `PermitUserEnvironment no`, the operator's key in the user's
 *    `~/.ssh/authorized_keys`; a session gets `XDG_RUNTIME_DIR` and `DBUS_SESSION_BUS_ADDRESS` as
 *    pam_systemd would give it (unless `loginEnvironment: false`), and a PATH holding the user's
 *    node.
 *
 * Everything is removed by `stop()` (call it in an `after` hook); what a suite forgot is removed by
 * a root `after` hook and by a process exit handler, and what a killed test process left (its
 * claims record the namespace, veth and sshd; its users have records of their own) is removed by
 * the next one that starts hosts.
 *
 * Where this cannot run — not root, no `ip`/`nsenter`/`sshd`/systemd, `ip netns add` refused, no
 * cgroups to delegate — the suite is pending with the reason (and the Debian package), recorded
 * for `.ci/run` like any missing tool.
 *
 * This module assembles the hosts and keeps the ones this process runs (stopped in `after` and at
 * exit); the parts are siblings: netns-claims.ts (the subnet claims and their records),
 * netns-network.ts (the netns, veth and the mount namespace's holder), netns-sshd.ts (the sshd and
 * `NetnsHostsOptions`, re-exported here), netns-cleanup.ts (taking a claim's host down, stale ones
 * included), and the user manager of systemd-user.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import {
  SYSTEM_TOOLS,
  requireSystemTools,
  skipForEnvironment,
  type SkippableContext,
  type SystemTool,
} from '@fleet/testkit';
import { NETNS_STATE_DIR, SUBNET_PREFIX, claimSubnet, type ClaimRecord } from './netns-claims.js';
import { releaseClaim, releaseStaleClaims } from './netns-cleanup.js';
import { makeNetwork, startHolder } from './netns-network.js';
import { startSshdIn, type NetnsHostsOptions } from './netns-sshd.js';
import { alive, readText, signal, sleepSync } from './processes.js';
import {
  SYSTEMD_USER_TOOLS,
  startSystemdUser,
  systemdUserProblem,
  type OwnedSystemdUser,
  type SystemdUser,
  type UserRun,
  type UserRunOptions,
} from './systemd-user.js';

export { NETNS_STATE_DIR } from './netns-claims.js';
export type { NetnsHostsOptions } from './netns-sshd.js';

const NSENTER: SystemTool = { command: 'nsenter', debianPackage: 'util-linux' };
const MOUNT: SystemTool = { command: 'mount', debianPackage: 'mount' };
const PURPOSE = 'runs against hosts in network namespaces (netns, sshd, systemd --user)';
/** This test process's part of every namespace name. */
const PROCESS_TAG = randomBytes(3).toString('hex');

export interface NetnsHostSpec {
  /** Short: `[a-z][a-z0-9]{0,13}` (it is part of the namespace and user names). */
  readonly name: string;
}

export interface NetnsHost {
  /** The spec's name, e.g. `alpha`. */
  readonly name: string;
  /** The netns name, unique per test process: `fleet-<hex>-<name>` (path `/run/netns/<it>`). */
  readonly namespace: string;
  /** The host's own address inside its namespace: `10.231.<n>.2`. */
  readonly address: string;
  /** The root namespace's end of the veth: `10.231.<n>.1` (what the host sees operators come from). */
  readonly gateway: string;
  /** The root side's interface name: `fleet<n>`. */
  readonly veth: string;
  /** Its Unix user (dedicated, made for this test process). */
  readonly user: string;
  readonly home: string;
  readonly uid: number;
  readonly gid: number;
  /** The port sshd listens on, at `address` (22). */
  readonly sshPort: number;
  /** The sshd's public host key line, `ssh-ed25519 AAAA…`. */
  readonly hostKey: string;
  /** A known_hosts line pinning it: `<address> ssh-ed25519 AAAA…`. */
  readonly knownHostsLine: string;
  /** A node binary the user can execute (`/usr/bin/node`-like, or a copy in its home). */
  readonly nodePath: string;
  /** `/run/user/<uid>`. */
  readonly runtimeDir: string;
  /** What `run` gives a process: HOME, USER, PATH, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS… */
  readonly env: Readonly<Record<string, string>>;
  /** The user's manager (its `fleet()`, `cli()`, `show()`, `makeDir()`, `chown()`, pid…). */
  readonly manager: SystemdUser;
  /** Runs `argv` as the user inside the namespace, with its manager's environment. */
  run(argv: readonly string[], options?: UserRunOptions): Promise<UserRun>;
  /** `systemctl --user ARGS` as the user. */
  systemctl(...args: string[]): Promise<UserRun>;
  /** The sshd log so far (LogLevel VERBOSE). */
  sshdLog(): string;
  /** Stops sshd and the manager, removes the user, the namespace, the veth and the claim. */
  stop(): Promise<void>;
}

// ---- the hosts this process runs ------------------------------------------------------------

/** Stops of hosts not stopped yet (sync: the exit handler runs them too). */
const running = new Map<string, () => void>();

function stopAllHosts(): void {
  for (const [namespace, stop] of [...running]) {
    running.delete(namespace);
    stop();
  }
}

process.once('exit', stopAllHosts);
// A root hook when this module is loaded with the test files: what a suite left stops with the run.
if (typeof after === 'function') after(stopAllHosts);

async function startHost(
  context: SkippableContext,
  spec: NetnsHostSpec,
  claim: ClaimRecord,
  options: NetnsHostsOptions,
): Promise<NetnsHost> {
  const address = `${SUBNET_PREFIX}.${claim.subnet}.2`;
  let manager: OwnedSystemdUser | undefined;
  let sshdPid: number | null = null;
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    running.delete(claim.namespace);
    if (sshdPid !== null && alive(sshdPid)) {
      signal(sshdPid, 'SIGTERM');
      for (let waited = 0; waited < 3_000 && alive(sshdPid); waited += 50) sleepSync(50);
    }
    void manager?.stop();
    releaseClaim({ ...claim, sshdPid });
  };
  running.set(claim.namespace, stopSync);
  try {
    const holder = await startHolder(claim);
    const mountns = `/proc/${holder}/ns/mnt`;
    manager = await startSystemdUser(context, {
      userPrefix: `fleet-h-${spec.name}-`,
      netns: claim.namespace,
      mountns,
    });
    const env = {
      ...manager.env,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${manager.runtimeDir}/bus`,
    };
    const sshd = await startSshdIn(claim, manager, address, env, options, mountns);
    sshdPid = sshd.pid;
    const owner = manager;
    const run = (argv: readonly string[], runOptions: UserRunOptions = {}) => {
      const [command, ...args] = argv;
      if (command === undefined) throw new Error('run: an empty argv');
      return owner.run(command, args, {
        ...runOptions,
        env: { DBUS_SESSION_BUS_ADDRESS: env.DBUS_SESSION_BUS_ADDRESS, ...runOptions.env },
      });
    };
    return {
      name: spec.name,
      namespace: claim.namespace,
      address,
      gateway: `${SUBNET_PREFIX}.${claim.subnet}.1`,
      veth: claim.veth,
      user: owner.user,
      home: owner.home,
      uid: owner.uid,
      gid: owner.gid,
      sshPort: 22,
      hostKey: sshd.hostKey,
      knownHostsLine: `${address} ${sshd.hostKey}`,
      nodePath: owner.node,
      runtimeDir: owner.runtimeDir,
      env,
      manager: owner,
      run,
      systemctl: (...args: string[]) => run(['systemctl', '--user', ...args]),
      sshdLog: () => readText(sshd.logFile) ?? '',
      stop: () => {
        stopSync();
        return Promise.resolve();
      },
    };
  } catch (error) {
    stopSync();
    throw error;
  }
}

/**
 * In a `before` hook: starts one host per spec (namespace, veth, user, `systemd --user`, sshd), or
 * the suite is pending with the reason this machine cannot. Stop each with `stop()` in `after`.
 */
export async function startNetnsHosts(
  context: SkippableContext,
  specs: readonly NetnsHostSpec[],
  options: NetnsHostsOptions,
): Promise<NetnsHost[]> {
  for (const spec of specs) {
    if (!/^[a-z][a-z0-9]{0,13}$/.test(spec.name)) {
      throw new Error(`host name ${JSON.stringify(spec.name)}: want [a-z][a-z0-9]{0,13}`);
    }
  }
  if (new Set(specs.map((spec) => spec.name)).size !== specs.length) {
    throw new Error('host names must differ');
  }
  if (!/^(ssh-|ecdsa-|sk-)\S+ \S+/.test(options.authorizedKey.trim())) {
    throw new Error(`authorizedKey is not a public key line: ${options.authorizedKey}`);
  }
  if (process.platform !== 'linux') {
    skipForEnvironment(context, `${PURPOSE}: the machine runs ${process.platform}, not Linux`);
  }
  if (process.getuid?.() !== 0) {
    skipForEnvironment(
      context,
      `${PURPOSE}: network namespaces, veth pairs and test users need root; run the suite as root`,
    );
  }
  requireSystemTools(
    context,
    [
      SYSTEM_TOOLS.ip,
      NSENTER,
      SYSTEM_TOOLS.unshare,
      MOUNT,
      SYSTEM_TOOLS.sshd,
      SYSTEM_TOOLS.ssh,
      SYSTEM_TOOLS.sshKeygen,
      ...SYSTEMD_USER_TOOLS,
    ],
    PURPOSE,
  );
  const problem = systemdUserProblem();
  if (problem !== null) skipForEnvironment(context, `${PURPOSE}: ${problem}`, ['systemd']);

  mkdirSync(NETNS_STATE_DIR, { recursive: true, mode: 0o700 });
  releaseStaleClaims();

  // The networks first, one by one (fast; a machine that refuses namespaces says so here).
  const claims: ClaimRecord[] = [];
  for (const spec of specs) {
    const claim = claimSubnet(`fleet-${PROCESS_TAG}-${spec.name}`);
    claims.push(claim);
    try {
      makeNetwork(claim);
    } catch (error) {
      for (const made of claims) releaseClaim(made);
      skipForEnvironment(
        context,
        `${PURPOSE}: this machine refuses a network namespace or veth pair (${(error as Error).message.trim()})`,
        ['iproute2'],
      );
      throw error;
    }
  }
  // Then the users, managers and sshds, side by side.
  const started = await Promise.allSettled(
    specs.map((spec, i) => startHost(context, spec, claims[i] as ClaimRecord, options)),
  );
  const hosts = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    for (const host of hosts) await host.stop();
    throw failed.reason;
  }
  return hosts;
}
