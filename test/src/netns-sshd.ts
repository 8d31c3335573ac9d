/**
 * The OpenSSH server of a network-namespace host (netns-host.ts, step 4): a fresh ed25519 host
 * key, an sshd_config of public-key auth only for the host's user, the operator's key as that
 * user's only authorized key, the session environment a login would get (`SetEnv`), and sshd
 * started inside the host's namespaces and waited for until it listens. Its files live in the
 * host's claim directory (netns-claims.ts), and its pid is recorded in the claim for the cleanup.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SYSTEM_TOOLS } from '@fleet/testkit';
import { claimDir, writeClaim, type ClaimRecord } from './netns-claims.js';
import { exited, readText } from './processes.js';
import { generateKey } from './sshd.js';
import type { SystemdUser } from './systemd-user.js';

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

/** Starts sshd inside the namespace and waits until it listens on `address:22`. */
export async function startSshdIn(
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
