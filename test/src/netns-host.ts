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
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  SYSTEM_TOOLS,
  requireSystemTools,
  skipForEnvironment,
  type SkippableContext,
  type SystemTool,
} from '@fleet/testkit';
import { generateKey } from './sshd.js';
import {
  SYSTEMD_USER_TOOLS,
  startSystemdUser,
  systemdUserProblem,
  type OwnedSystemdUser,
  type SystemdUser,
  type UserRun,
  type UserRunOptions,
} from './systemd-user.js';

/** Claims of subnets (`<n>/`), each with its record and its sshd's files (root-only). */
export const NETNS_STATE_DIR = '/run/fleet-netns-test';
/** Each host's subnet is `10.231.<n>.0/24`. */
const SUBNET_PREFIX = '10.231';
const NSENTER: SystemTool = { command: 'nsenter', debianPackage: 'util-linux' };
const MOUNT: SystemTool = { command: 'mount', debianPackage: 'mount' };

/**
 * The holder of a host's mount namespace (run by `unshare --mount --propagation slave` inside the
 * host's netns): `/run/systemd` becomes a tmpfs showing the machine's entries (bind mounts from
 * `$1`, where the machine's own is bound first) plus `system/`, the marker systemd and
 * `sd_booted()` check — so on the host `systemctl --user is-system-running` says `running` as on
 * a workstation, while the machine's /run (which apt checks) stays as it was (`/run/systemd`
 * itself is made there if missing: apt looks only for `system/`). Then it sleeps until the host
 * stops.
 */
const HOLDER_SCRIPT = `set -e
saved=$1
mkdir -p "$saved" /run/systemd
mount --bind /run/systemd "$saved"
mount -t tmpfs -o mode=0755 fleet-host-run-systemd /run/systemd
for e in "$saved"/* "$saved"/.[!.]*; do
  [ -e "$e" ] || [ -L "$e" ] || continue
  n=\${e##*/}
  if [ -L "$e" ]; then cp -P "$e" "/run/systemd/$n"; continue; fi
  if [ -d "$e" ]; then mkdir "/run/systemd/$n"; else : > "/run/systemd/$n"; fi
  mount --bind "$e" "/run/systemd/$n"
done
mkdir -p /run/systemd/system
exec sleep infinity
`;
const PURPOSE = 'runs against hosts in network namespaces (netns, sshd, systemd --user)';
/** This test process's part of every namespace name. */
const PROCESS_TAG = randomBytes(3).toString('hex');

export interface NetnsHostSpec {
  /** Short: `[a-z][a-z0-9]{0,13}` (it is part of the namespace and user names). */
  readonly name: string;
}

export interface NetnsHostsOptions {
  /** The operator's public key line (`ssh-ed25519 AAAA…`), authorised for every host's user. */
  readonly authorizedKey: string;
  /**
   * SSH sessions get `XDG_RUNTIME_DIR` and `DBUS_SESSION_BUS_ADDRESS` of the user's manager, as
   * pam_systemd gives a login on a workstation (default `true`; `false`: a bare session).
   */
  readonly loginEnvironment?: boolean;
  /** Extra sshd_config lines, appended. */
  readonly extraSshdConfig?: readonly string[];
  /**
   * Variables every SSH session gets on top of (or in place of) the login environment above —
   * e.g. a PATH with other tools first, as a host's own login shell would set it. Values must not
   * hold whitespace or quotes (sshd_config `SetEnv`).
   */
  readonly sessionEnvironment?: Readonly<Record<string, string>>;
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

/** What a claim records, for the cleanup of a killed test process's hosts. */
interface ClaimRecord {
  readonly ownerPid: number;
  readonly subnet: number;
  readonly namespace: string;
  readonly veth: string;
  readonly sshdPid: number | null;
}

// ---- helpers --------------------------------------------------------------------------------

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return false;
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `ip ARGS`; throws with its stderr when it fails. */
function ip(args: readonly string[]): string {
  const done = spawnSync('ip', [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (done.error) throw done.error;
  if (done.status !== 0) {
    throw Object.assign(new Error(`ip ${args.join(' ')}: ${done.stderr.trim()}`), {
      stderr: done.stderr,
    });
  }
  return done.stdout;
}

function ipQuiet(args: readonly string[]): void {
  spawnSync('ip', [...args], { stdio: 'ignore' });
}

// ---- claims ---------------------------------------------------------------------------------

const claimDir = (subnet: number) => join(NETNS_STATE_DIR, String(subnet));
const claimRecordPath = (subnet: number) => join(claimDir(subnet), 'claim.json');

function readClaim(subnet: number): ClaimRecord | null {
  const text = readText(claimRecordPath(subnet));
  if (text === null) return null;
  try {
    return JSON.parse(text) as ClaimRecord;
  } catch {
    return null;
  }
}

function writeClaim(record: ClaimRecord): void {
  writeFileSync(claimRecordPath(record.subnet), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** Removes what a claim holds: sshd, every process left in the namespace, the veth, the netns. */
function releaseClaim(record: ClaimRecord): void {
  if (record.sshdPid !== null && alive(record.sshdPid)) {
    signal(record.sshdPid, 'SIGTERM');
    for (let waited = 0; waited < 3_000 && alive(record.sshdPid); waited += 50) sleepSync(50);
    if (alive(record.sshdPid)) signal(record.sshdPid, 'SIGKILL');
  }
  // Whatever is left in the namespace (a killed test process's manager, units, holder): asked to
  // stop first, then killed.
  const left = () =>
    (spawnSync('ip', ['netns', 'pids', record.namespace], { encoding: 'utf8' }).stdout ?? '')
      .split(/\s+/)
      .filter((pid) => /^\d+$/.test(pid))
      .map(Number);
  for (const pid of left()) signal(pid, 'SIGTERM');
  for (let waited = 0; waited < 3_000 && left().length > 0; waited += 100) sleepSync(100);
  for (let round = 0; round < 3; round += 1) {
    const pids = left();
    if (pids.length === 0) break;
    for (const pid of pids) signal(pid, 'SIGKILL');
    sleepSync(100);
  }
  ipQuiet(['link', 'del', record.veth]);
  ipQuiet(['netns', 'del', record.namespace]);
  rmSync(claimDir(record.subnet), { recursive: true, force: true });
}

/** Subnets already on an interface of the root namespace (not ours to take). */
function subnetsInUse(): Set<number> {
  const used = new Set<number>();
  const text = spawnSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' }).stdout ?? '';
  for (const match of text.matchAll(/inet 10\.231\.(\d+)\./g)) used.add(Number(match[1]));
  return used;
}

/** Releases the claims of test processes that are gone (and unfinished claims older than 60 s). */
function releaseStaleClaims(): void {
  for (const name of readdirSync(NETNS_STATE_DIR)) {
    if (!/^\d+$/.test(name)) continue;
    const subnet = Number(name);
    const record = readClaim(subnet);
    if (record === null) {
      let age = 0;
      try {
        age = Date.now() - statSync(claimDir(subnet)).mtimeMs;
      } catch {
        continue;
      }
      if (age > 60_000) rmSync(claimDir(subnet), { recursive: true, force: true });
      continue;
    }
    if (!alive(record.ownerPid)) releaseClaim(record);
  }
}

/** Claims a free subnet number (1…254) for `namespace`; its record is written at once. */
function claimSubnet(namespace: string): ClaimRecord {
  const used = subnetsInUse();
  const start = 1 + Math.floor(Math.random() * 254);
  for (let i = 0; i < 254; i += 1) {
    const subnet = 1 + ((start - 1 + i) % 254);
    if (used.has(subnet)) continue;
    try {
      mkdirSync(claimDir(subnet), { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    const record: ClaimRecord = {
      ownerPid: process.pid,
      subnet,
      namespace,
      veth: `fleet${subnet}`,
      sshdPid: null,
    };
    writeClaim(record);
    return record;
  }
  throw new Error(`no free subnet ${SUBNET_PREFIX}.<n>.0/24 (n = 1…254) to claim`);
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

/** Sets up the namespace and its veth for a claim (throws with ip's words when refused). */
function makeNetwork(claim: ClaimRecord): void {
  const { namespace, veth, subnet } = claim;
  ip(['netns', 'add', namespace]);
  ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace]);
  ip(['addr', 'add', `${SUBNET_PREFIX}.${subnet}.1/24`, 'dev', veth]);
  ip(['link', 'set', veth, 'up']);
  ip(['-n', namespace, 'addr', 'add', `${SUBNET_PREFIX}.${subnet}.2/24`, 'dev', 'eth0']);
  ip(['-n', namespace, 'link', 'set', 'eth0', 'up']);
  ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
}

/** Starts the namespace's holder (see HOLDER_SCRIPT); returns its pid once the marker shows. */
async function startHolder(claim: ClaimRecord): Promise<number> {
  const child = spawn(
    'nsenter',
    [
      `--net=/run/netns/${claim.namespace}`,
      '--',
      SYSTEM_TOOLS.unshare.command,
      '--mount',
      '--propagation',
      'slave',
      '--',
      'sh',
      '-c',
      HOLDER_SCRIPT,
      'sh',
      join(claimDir(claim.subnet), 'machine-run-systemd'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  child.unref();
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let early: Error | undefined;
  child.once('error', (error) => (early = error));
  child.once('exit', (code, sig) => (early ??= new Error(`exited (${code ?? sig})`)));
  const pid = child.pid;
  const until = Date.now() + 10_000;
  // nsenter, unshare and sh exec one another: the pid is the holder's all along.
  while (pid === undefined || !existsSync(`/proc/${pid}/root/run/systemd/system`)) {
    if (early || Date.now() > until) {
      if (!exited(child)) child.kill('SIGKILL');
      throw new Error(
        `the mount namespace of ${claim.namespace} (${early?.message ?? 'timeout'}): ${stderr}`,
      );
    }
    await sleep(20);
  }
  child.stderr?.destroy();
  return pid;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Starts sshd inside the namespace and waits until it listens on `address:22`. */
async function startSshdIn(
  claim: ClaimRecord,
  manager: SystemdUser,
  address: string,
  env: Readonly<Record<string, string>>,
  options: NetnsHostsOptions,
  mountns: string,
): Promise<{ hostKey: string; pid: number; logFile: string }> {
  const dir = claimDir(claim.subnet);
  const host = await generateKey(join(dir, 'ssh_host_ed25519_key'));

  writeAuthorizedKey(manager, options.authorizedKey);
  const sessionEnv = sessionSetEnv(env, options);
  const config = join(dir, 'sshd_config');
  const logFile = join(dir, 'sshd.log');
  writeFileSync(
    config,
    [
      `ListenAddress ${address}:22`,
      `HostKey ${host.privateKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'AuthorizedKeysFile .ssh/authorized_keys',
      'UsePAM no',
      'StrictModes yes',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'AuthenticationMethods publickey',
      'PermitRootLogin no',
      'PermitUserEnvironment no',
      `AllowUsers ${manager.user}`,
      `SetEnv ${sessionEnv.join(' ')}`,
      'Subsystem sftp internal-sftp',
      'LogLevel VERBOSE',
      ...(options.extraSshdConfig ?? []),
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  writeFileSync(logFile, '', { mode: 0o600 });
  // sshd refuses to start without its privilege-separation directory (systemd makes it).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  // nsenter execs sshd: the child's pid is sshd's.
  const child = spawn(
    'nsenter',
    [
      `--net=/run/netns/${claim.namespace}`,
      `--mount=${mountns}`,
      '--',
      SYSTEM_TOOLS.sshd.command,
      '-D',
      '-f',
      config,
      '-E',
      logFile,
    ],
    { stdio: 'ignore', detached: true },
  );
  child.unref();
  const pid = child.pid;
  if (pid !== undefined) writeClaim({ ...claim, sshdPid: pid });
  await untilListening(child, claim.namespace, address, logFile);
  return { hostKey: host.publicKey, pid: pid as number, logFile };
}

/** The operator's key as the only authorized key of the node's user (`StrictModes yes` holds). */
function writeAuthorizedKey(manager: SystemdUser, authorizedKey: string): void {
  const sshDir = join(manager.home, '.ssh');
  mkdirSync(sshDir, { recursive: true, mode: 0o700 });
  chmodSync(sshDir, 0o700);
  const authorizedKeys = join(sshDir, 'authorized_keys');
  writeFileSync(authorizedKeys, `${authorizedKey.trim()}\n`, { mode: 0o600 });
  chmodSync(authorizedKeys, 0o600);
  chownSync(sshDir, manager.uid, manager.gid);
  chownSync(authorizedKeys, manager.uid, manager.gid);
}

/** The `SetEnv` pairs of a login session: the user manager's variables, or PATH alone. */
function sessionSetEnv(
  env: Readonly<Record<string, string>>,
  options: NetnsHostsOptions,
): string[] {
  const login: Record<string, string | undefined> =
    options.loginEnvironment === false
      ? { PATH: env['PATH'] }
      : Object.fromEntries(
          ['XDG_RUNTIME_DIR', 'DBUS_SESSION_BUS_ADDRESS', 'PATH'].map((key) => [key, env[key]]),
        );
  return Object.entries({ ...login, ...options.sessionEnvironment }).map(([key, value]) => {
    if (value !== undefined && /[\s"'\\]/.test(value)) {
      throw new Error(`sessionEnvironment ${key}: a SetEnv value holds whitespace or a quote`);
    }
    return `${key}=${value}`;
  });
}

/** Waits until sshd's log says it listens on `address:22`; a sshd that ends or takes 10 s fails. */
async function untilListening(
  child: ChildProcess,
  namespace: string,
  address: string,
  logFile: string,
): Promise<void> {
  let early: Error | undefined;
  child.once('error', (error) => (early = error));
  child.once('exit', (code, sig) => (early ??= new Error(`sshd exited (${code ?? sig})`)));
  const until = Date.now() + 10_000;
  const listening = `Server listening on ${address} port 22.`;
  while (!(readText(logFile) ?? '').includes(listening)) {
    if (early || child.pid === undefined || Date.now() > until) {
      if (!exited(child)) child.kill('SIGKILL');
      throw new Error(
        `sshd in ${namespace} did not listen on ${address}:22 (${early?.message ?? 'timeout'}); its log:\n${readText(logFile) ?? ''}`,
      );
    }
    await sleep(50);
  }
}

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
