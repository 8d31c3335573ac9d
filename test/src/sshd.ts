/**
 * A real OpenSSH server on 127.0.0.1 for the SSH recovery path's tests (reliability catalogue,
 * "SSH bootstrap target"): fresh ed25519 host and client keys in a temp dir, `authorized_keys`
 * holding the client key with the forced command (`authorizedKeysLine`), sshd in the foreground
 * (`-D`) logging to a file at VERBOSE. Each call is a new server with a new host key, so a
 * second one is the "changed host key" scenario. Always `stop()` it (an `after` hook).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SYSTEM_TOOLS, requireSystemTools, type SkippableContext } from '@fleet/testkit';
import { ROOT, waitFor } from './fleet.js';

export const SSHD_BIN = SYSTEM_TOOLS.sshd.command;

/** In a `before` hook: the suite is pending, with the reason, on a machine without OpenSSH. */
export function requireSshd(context: SkippableContext): void {
  requireSystemTools(
    context,
    [SYSTEM_TOOLS.sshd, SYSTEM_TOOLS.ssh, SYSTEM_TOOLS.sshKeygen],
    'runs against a real OpenSSH server on 127.0.0.1',
  );
}

/** A module of the built operator services (`packages/operator/dist/src/<relative>`). */
export async function operatorModule<T>(relative: string): Promise<T> {
  const url = pathToFileURL(join(ROOT, 'packages', 'operator', 'dist', 'src', relative)).href;
  return (await import(url)) as T;
}

type AuthorizedKeysModule = typeof import('@fleet/operator/bootstrap/authorized-keys.js');

export interface SshdOptions {
  /** The forced command of the client key, as argv (`authorized_keys` `command="…"`). */
  readonly forcedCommand: readonly string[];
  /** Extra sshd_config lines, appended. */
  readonly extraConfig?: readonly string[];
  /**
   * The user the tests log in as (default: the current one). sshd reads `authorized_keys` as that
   * user, so it is handed to them (the server's directory traversable, its host key not).
   */
  readonly user?: { readonly name: string; readonly uid: number; readonly gid: number };
}

export interface Sshd {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** The user the tests log in as. */
  readonly user: string;
  /** The server's public host key, `ssh-ed25519 AAAA…` (what fleet.yaml pins). */
  readonly hostKey: string;
  /** The client's private key (the operator's recovery key); its public key is authorised. */
  readonly identityFile: string;
  /** The client's public key line. */
  readonly publicKey: string;
  /** The authorized_keys line sshd was given. */
  readonly authorizedKeys: string;
  readonly logFile: string;
  readonly dir: string;
  readonly pid: number;
  /** The sshd log so far. */
  log(): Promise<string>;
  /** A known_hosts file pinning this server's host key (for the system `ssh` client). */
  writeKnownHosts(path: string, hostKey?: string): Promise<void>;
  /** Stops sshd (SIGTERM, then SIGKILL), waits for it, and removes its temp dir. */
  stop(): Promise<void>;
}

/** Runs a program, resolving with its exit code and output (rejects only if it cannot start). */
export function run(
  command: string,
  args: readonly string[],
  options: { timeoutMs?: number; input?: string } = {},
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, stdout, stderr });
    });
    // A program that never reads its stdin may exit first: EPIPE here is not a failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** An ed25519 key pair without passphrase: `{ privateKey: path, publicKey: "ssh-ed25519 AAAA…" }`. */
export async function generateKey(
  path: string,
): Promise<{ privateKey: string; publicKey: string }> {
  const made = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', path]);
  if (made.exitCode !== 0) throw new Error(`ssh-keygen failed: ${made.stderr}`);
  const publicKey = (await readFile(`${path}.pub`, 'utf8')).trim().split(' ').slice(0, 2).join(' ');
  return { privateKey: path, publicKey };
}

/** A port that was free a moment ago (bound to port 0, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (exited(child)) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (!exited(child)) child.kill('SIGKILL');
  }, 5_000);
  await done;
  clearTimeout(timer);
}

export async function startSshd(options: SshdOptions): Promise<Sshd> {
  const { authorizedKeysLine } = await operatorModule<AuthorizedKeysModule>(
    'bootstrap/authorized-keys.js',
  );
  // sshd refuses to start without its privilege-separation directory (systemd makes it).
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 }).catch(() => undefined);
  const dir = await mkdtemp(join(tmpdir(), 'fleet-sshd-'));
  try {
    const hostKeyFile = join(dir, 'ssh_host_ed25519_key');
    const host = await generateKey(hostKeyFile);
    const client = await generateKey(join(dir, 'client_ed25519'));
    const authorizedKeys = authorizedKeysLine({
      publicKey: client.publicKey,
      command: options.forcedCommand,
    });
    const authorizedKeysFile = join(dir, 'authorized_keys');
    await writeFile(authorizedKeysFile, `${authorizedKeys}\n`, { mode: 0o600 });
    const user = options.user?.name ?? userInfo().username;
    if (options.user) {
      await chown(authorizedKeysFile, options.user.uid, options.user.gid);
      await chmod(dir, 0o711);
    }
    const files: SshdFiles = {
      dir,
      hostKeyFile,
      authorizedKeysFile,
      logFile: join(dir, 'sshd.log'),
      config: join(dir, 'sshd_config'),
    };
    const { logFile } = files;
    const log = () => readFile(logFile, 'utf8');
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      await writeFile(files.config, sshdConfig(files, port, user, options.extraConfig ?? []), {
        // Readable by the user the receiver runs as: it checks the config with `sshd -T`
        // (sshd-check.ts). It names the host key's path, not its bytes.
        mode: 0o644,
      });
      await writeFile(logFile, '', { mode: 0o600 });
      const child = await spawnListening(files, port, attempt < 3);
      if (child === 'port taken') continue;
      return {
        host: '127.0.0.1',
        port,
        user,
        hostKey: host.publicKey,
        identityFile: client.privateKey,
        publicKey: client.publicKey,
        authorizedKeys,
        logFile,
        dir,
        pid: child.pid as number,
        log,
        writeKnownHosts: (path, hostKey = host.publicKey) =>
          writeFile(path, `[127.0.0.1]:${port} ${hostKey}\n`, { mode: 0o600 }),
        stop: async () => {
          await stopChild(child);
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The files of one test sshd, all in its own directory. */
interface SshdFiles {
  readonly dir: string;
  readonly hostKeyFile: string;
  readonly authorizedKeysFile: string;
  readonly logFile: string;
  readonly config: string;
}

/** The sshd_config of a test sshd on 127.0.0.1:`port`, public keys only, for `user` alone. */
function sshdConfig(
  files: SshdFiles,
  port: number,
  user: string,
  extra: readonly string[],
): string {
  return [
    `ListenAddress 127.0.0.1:${port}`,
    `HostKey ${files.hostKeyFile}`,
    `AuthorizedKeysFile ${files.authorizedKeysFile}`,
    'UsePAM no',
    'StrictModes no',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'AuthenticationMethods publickey',
    // The tests run as root in CI (and in the dev container).
    'PermitRootLogin prohibit-password',
    // sshd takes a keyword's first value: a test that sets its own leaves this one out.
    ...(extra.some((line) => /^PermitUserEnvironment /i.test(line))
      ? []
      : ['PermitUserEnvironment no']),
    `AllowUsers ${user}`,
    `PidFile ${join(files.dir, 'sshd.pid')}`,
    'LogLevel VERBOSE',
    ...extra,
    '',
  ].join('\n');
}

/**
 * Starts sshd with its config; resolves once it listens on `port`. `'port taken'` when another
 * process bound the port between freePort() and sshd (and `mayRetry`): the caller tries another.
 */
async function spawnListening(
  files: SshdFiles,
  port: number,
  mayRetry: boolean,
): Promise<ChildProcess | 'port taken'> {
  const child = spawn(SSHD_BIN, ['-D', '-f', files.config, '-E', files.logFile], {
    stdio: 'ignore',
  });
  const failed = new Promise<Error>((resolve) => {
    child.once('error', resolve);
    child.once('exit', (code, signal) =>
      resolve(new Error(`sshd exited (${code ?? signal}) before listening`)),
    );
  });
  let early: Error | undefined;
  void failed.then((error) => (early = error));
  const log = () => readFile(files.logFile, 'utf8');
  try {
    await waitFor(
      async () => {
        if (early) throw early;
        return (await log()).includes(`Server listening on 127.0.0.1 port ${port}.`);
      },
      10_000,
      `sshd listening on 127.0.0.1:${port}`,
    );
  } catch (error) {
    await stopChild(child);
    const text = await log().catch(() => '');
    if (mayRetry && /Address already in use/.test(text)) return 'port taken';
    throw new Error(`${(error as Error).message}\nsshd log:\n${text}`);
  }
  return child;
}
