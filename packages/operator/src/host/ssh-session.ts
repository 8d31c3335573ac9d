/**
 * The SSH session `fleet host add` and `fleet host remove` run over (contract §12.1): a shell on
 * the node as its user — which is why a node policy may travel this way and never through a token
 * (contract §5.1). node-ssh (ssh2) is the design card's library.
 *
 * - The host key: with a pin (`--host-key`, or fleet.yaml's `ssh.hostKey`) it must match in the
 *   key exchange, before authentication, or nothing is sent (`HOSTKEY_MISMATCH`). Without one a
 *   session may only look (`host add` without `--confirm`): the key it saw is reported for the
 *   operator to compare. known_hosts is never read or written.
 * - Authentication as ssh finds it: the agent (`$SSH_AUTH_SOCK`), then the first of
 *   `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`, or `--identity`. Public keys only.
 * - Bounded: handshake timeout, keepalives, a timeout per command, capped output.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FleetError } from '@fleet/core';
import type { NodeSSH } from 'node-ssh';
import { blobType, parseOpenSshPublicKey, sshFingerprint } from '../bootstrap/ssh-keys.js';

export interface SshAddress {
  readonly user: string;
  readonly host: string;
  readonly port: number;
}

/** `USER@HOST[:PORT]` (an IPv6 address in brackets) → its parts; `USAGE` otherwise. */
export function parseSshAddress(text: string): SshAddress {
  const match =
    /^([a-z_][a-z0-9_-]{0,31})@(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*)(?::(\d{1,5}))?$/.exec(
      text,
    );
  const port = match?.[3] === undefined ? 22 : Number(match[3]);
  if (!match || port < 1 || port > 65535) {
    throw new FleetError(
      'USAGE',
      `--ssh ${JSON.stringify(text)} is not USER@HOST[:PORT] (e.g. me@10.0.0.2 or me@box.lan:2222)`,
    );
  }
  const host = match[2] as string;
  return { user: match[1] as string, host: host.startsWith('[') ? host.slice(1, -1) : host, port };
}

/** A host key pin: an OpenSSH public key line, or its `SHA256:…` fingerprint. */
export type HostKeyPin = { readonly line: string } | { readonly fingerprint: string };

export function parseHostKeyPin(text: string): HostKeyPin {
  if (/^SHA256:[A-Za-z0-9+/]{43}$/.test(text.trim())) return { fingerprint: text.trim() };
  const key = parseOpenSshPublicKey(text);
  if (key === undefined) {
    throw new FleetError(
      'USAGE',
      `--host-key must be the host's public key (ssh-ed25519 AAAA…) or its fingerprint (SHA256:…, as ssh-keygen -lf prints it)`,
    );
  }
  return { line: `${key.type} ${key.blob.toString('base64')}` };
}

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface SshSession {
  /** The key the host presented: `ssh-ed25519 AAAA…` and its `SHA256:…` fingerprint. */
  readonly hostKey: { readonly line: string; readonly fingerprint: string };
  readonly pinned: boolean;
  /** Runs a POSIX shell command line; `stdin` is sent and closed. */
  run(command: string, options?: { stdin?: string; timeoutMs?: number }): Promise<CommandResult>;
  /** Copies a local file to `remote` (SFTP). */
  put(local: string, remote: string): Promise<void>;
  close(): void;
}

export interface ConnectOptions {
  readonly address: SshAddress;
  readonly name: string;
  readonly pin: HostKeyPin | undefined;
  /** An explicit private key file (`--identity`); default: the agent, then ~/.ssh/id_*. */
  readonly identity?: string;
  readonly readyTimeoutMs?: number;
}

const IDENTITY_FILES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** The private key to offer: `--identity`, else the first of ~/.ssh/id_* that exists. */
async function privateKey(identity: string | undefined): Promise<string | undefined> {
  const file =
    identity ??
    IDENTITY_FILES.map((name) => join(homedir(), '.ssh', name)).find((path) => existsSync(path));
  if (file === undefined) return undefined;
  return readFile(file, 'utf8').catch((error: unknown) => {
    throw new FleetError(
      'CREDENTIALS_MISSING',
      `cannot read the SSH identity ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  });
}

function pinMatches(pin: HostKeyPin, key: Buffer): boolean {
  if ('fingerprint' in pin) return sshFingerprint(key) === pin.fingerprint;
  const pinned = parseOpenSshPublicKey(pin.line);
  return pinned !== undefined && pinned.blob.equals(key);
}

export async function openSshSession(options: ConnectOptions): Promise<SshSession> {
  // Lazy: `fleet host remove` without --confirm (its plan) never connects, and would load
  // node-ssh and ssh2 (+39 files) for nothing (measured, README).
  const { NodeSSH } = await import('node-ssh');
  const ssh = new NodeSSH();
  const { address, name } = options;
  const where = `${address.user}@${address.host} port ${address.port}`;
  const login = await sshLogin(name, options.identity);
  const blob = await connect(ssh, options, login, where);
  const hostKey = {
    line: `${blobType(blob) ?? 'unknown'} ${blob.toString('base64')}`,
    fingerprint: sshFingerprint(blob),
  };
  return {
    hostKey,
    pinned: options.pin !== undefined,
    run: (command, runOptions = {}) => runCommand(ssh, name, where, command, runOptions),
    async put(local, remote) {
      await ssh.putFile(local, remote);
    },
    close() {
      ssh.dispose();
    },
  };
}

/** What the session logs in with: a private key's text, the agent's socket, or both. */
interface SshLogin {
  readonly key: string | undefined;
  readonly agent: string | undefined;
}

async function sshLogin(name: string, identity: string | undefined): Promise<SshLogin> {
  const key = await privateKey(identity);
  const agent = process.env['SSH_AUTH_SOCK'];
  if (key === undefined && !agent) {
    throw new FleetError(
      'CREDENTIALS_MISSING',
      `no SSH key to log in to ${name} with: no agent ($SSH_AUTH_SOCK) and no ~/.ssh/id_ed25519, id_ecdsa or id_rsa (or give --identity FILE)`,
    );
  }
  return { key, agent };
}

/**
 * Connects and authenticates; the host key is checked against the pin in the key exchange, before
 * authentication. Returns the key the host presented.
 */
async function connect(
  ssh: NodeSSH,
  options: ConnectOptions,
  { key, agent }: SshLogin,
  where: string,
): Promise<Buffer> {
  const { address } = options;
  let offered: Buffer | undefined;
  try {
    await ssh.connect({
      host: address.host,
      port: address.port,
      username: address.user,
      ...(key === undefined ? {} : { privateKey: key }),
      ...(agent ? { agent } : {}),
      authHandler: [...(key === undefined ? [] : ['publickey']), ...(agent ? ['agent'] : [])],
      tryKeyboard: false,
      agentForward: false,
      readyTimeout: options.readyTimeoutMs ?? 20_000,
      keepaliveInterval: 10_000,
      keepaliveCountMax: 3,
      hostVerifier: (presented: unknown): boolean => {
        if (!Buffer.isBuffer(presented)) return false;
        offered = Buffer.from(presented);
        return options.pin === undefined || pinMatches(options.pin, offered);
      },
    });
  } catch (error) {
    ssh.dispose();
    throw connectError(error, options, { key, agent }, where, offered);
  }
  return offered as Buffer;
}

/** A failed connection as the operator can act on it: the wrong host key, no key taken, or no host. */
function connectError(
  error: unknown,
  { name, address, pin }: ConnectOptions,
  { key, agent }: SshLogin,
  where: string,
  offered: Buffer | undefined,
): FleetError {
  const message = error instanceof Error ? error.message : String(error);
  if (offered !== undefined && pin !== undefined && !pinMatches(pin, offered)) {
    return new FleetError(
      'HOSTKEY_MISMATCH',
      `the SSH host key of ${name} (${where}) is ${sshFingerprint(offered)}, not the one pinned (${'fingerprint' in pin ? pin.fingerprint : sshFingerprint(parseOpenSshPublicKey(pin.line)?.blob ?? Buffer.alloc(0))}): nothing was sent; compare it out of band (on the host: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub)`,
    );
  }
  if ((error as { level?: unknown }).level === 'client-authentication') {
    return new FleetError(
      'AUTH_INVALID',
      `${where} refused every key offered (${[key === undefined ? null : 'the identity file', agent ? 'the agent' : null].filter(Boolean).join(', ')}): add your public key to ${address.user}'s ~/.ssh/authorized_keys on ${name}`,
    );
  }
  return new FleetError('HOST_UNREACHABLE', `cannot reach ${name} over SSH (${where}): ${message}`);
}

/** One command, bounded: a timeout, and output over MAX_OUTPUT_BYTES refused. */
async function runCommand(
  ssh: NodeSSH,
  name: string,
  where: string,
  command: string,
  runOptions: { stdin?: string; timeoutMs?: number },
): Promise<CommandResult> {
  let bytes = 0;
  const timeoutMs = runOptions.timeoutMs ?? 5 * 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new FleetError(
            'REQUEST_TIMEOUT',
            `a command on ${name} (${where}) did not finish within ${timeoutMs / 1000} s`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    const response = await Promise.race([
      ssh.execCommand(command, {
        ...(runOptions.stdin === undefined
          ? {}
          : { stdin: Readable.from([Buffer.from(runOptions.stdin)]) }),
        onStdout: (chunk: Buffer) => {
          bytes += chunk.length;
        },
      }),
      timeout,
    ]);
    if (bytes > MAX_OUTPUT_BYTES) {
      throw new FleetError('RESPONSE_INVALID', `${name} answered more than 4 MiB: not used`);
    }
    return {
      code: typeof response.code === 'number' ? response.code : -1,
      stdout: response.stdout,
      stderr: response.stderr,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A string as one POSIX shell word (single-quoted). */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
