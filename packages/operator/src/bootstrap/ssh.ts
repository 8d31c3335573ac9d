/**
 * The operator side of the SSH recovery path (contract §12: `bootstrap apply --recover` for a host
 * whose controller is unavailable; reliability catalogue "Host key pinning").
 *
 * One connection runs one verb of the node's forced command (`fleet bootstrap receive`):
 * - the host key must equal fleet.yaml's pinned `hostKey`, byte for byte (type and key blob): it
 *   is checked in the key exchange, so a mismatch aborts before authentication, before any
 *   channel is opened and before anything is sent (`HOSTKEY_MISMATCH`); no pin is
 *   `HOSTKEY_UNKNOWN`, never trust on first use; known_hosts files are never read or written;
 * - host and user are checked syntactically before connecting (no `-o…`, `;`, `%`);
 * - public-key authentication with the credentials file's identity file only: no agent, no
 *   password or keyboard-interactive, no PTY, no agent/X11/port forwarding;
 * - bounded: handshake timeout, keepalives, an overall timeout, capped stdout and stderr.
 *
 * node-ssh (and ssh2 under it) is imported inside the function: CLI start-up stays fast.
 */
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { Readable } from 'node:stream';
import type { FleetError as FleetErrorClass } from '@fleet/core';
import {
  blobType,
  parseOpenSshPublicKey,
  sshFingerprint,
  type OpenSshPublicKey,
} from './ssh-keys.js';
import { RECOVERY_VERBS, isRecoveryVerb, type RecoveryVerb } from './verbs.js';

export interface RecoveryTarget {
  /** The host's name in fleet.yaml, for messages (default: `host`). */
  readonly name?: string;
  /** `hosts.<name>.ssh.host`: a host name or an IP address. */
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** The pinned host key from fleet.yaml, `ssh-ed25519 AAAA…`; `undefined` when none is pinned. */
  readonly hostKey: string | undefined;
  /** The operator's private key (credentials file `hosts.<name>.ssh.identityFile`), absolute. */
  readonly identityFile: string;
}

export interface RecoveryOptions {
  /** SSH handshake and authentication must finish within this (default 20 s). */
  readonly readyTimeoutMs?: number;
  /** The verb, once connected, up to the receiver's exit (default 15 min). */
  readonly timeoutMs?: number;
  /** Keepalive interval; 3 unanswered keepalives drop the connection (default 10 s). */
  readonly keepaliveIntervalMs?: number;
  /** Larger stdout is an error: the answer is not used (default 4 MiB). */
  readonly maxStdoutBytes?: number;
  /** stderr beyond this is dropped (default 256 KiB). */
  readonly maxStderrBytes?: number;
}

export interface RecoveryResult {
  /** The receiver's exit code (contract §7 codes). */
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

const DEFAULTS = {
  readyTimeoutMs: 20_000,
  timeoutMs: 15 * 60_000,
  keepaliveIntervalMs: 10_000,
  maxStdoutBytes: 4 * 1024 * 1024,
  maxStderrBytes: 256 * 1024,
} as const;

/** Private key files are small; anything larger is not one. */
const MAX_IDENTITY_FILE_BYTES = 64 * 1024;
/** The chunk size stdin is streamed in (the channel applies the SSH window). */
const STDIN_CHUNK_BYTES = 64 * 1024;

/** The host key algorithms that present a key of each pinnable type. */
const HOST_KEY_ALGORITHMS: Readonly<Record<string, readonly string[]>> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};

/** A host name, an IPv4 address, or an IPv6 address (optionally in brackets). */
const HOST_PATTERN =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[?[0-9A-Fa-f:.]{2,45}\]?)$/;
const USER_PATTERN = /^[a-z_][a-z0-9_-]{0,31}$/;

/** The parts of ssh2's client and channel used here (ssh2 ships no types of its own). */
interface Ssh2Channel {
  on(event: 'error', listener: (error: Error) => void): this;
  close(): void;
}
interface Ssh2Client {
  on(event: 'error', listener: (error: Error) => void): this;
}

type Core = typeof import('@fleet/core');

/**
 * Runs `verb` through the node's forced command over SSH and returns its exit code and output.
 * Throws a fleet error when the host cannot be used: `USAGE` (bad verb, host, user or port),
 * `HOSTKEY_UNKNOWN`, `HOSTKEY_MISMATCH`, `CREDENTIALS_*` (identity file), `AUTH_INVALID`,
 * `HOST_UNREACHABLE`, `REQUEST_TIMEOUT`, `RESPONSE_INVALID` (oversized output).
 */
export async function runRecoveryVerb(
  target: RecoveryTarget,
  verb: RecoveryVerb,
  stdin?: Buffer,
  options: RecoveryOptions = {},
): Promise<RecoveryResult> {
  const core = await import('@fleet/core');
  const settings = { ...DEFAULTS, ...options };
  const name = target.name ?? target.host;
  const fail = (code: ConstructorParameters<Core['FleetError']>[0], message: string) =>
    new core.FleetError(code, message);

  // 1. Everything checked before a socket is opened.
  if (typeof verb !== 'string' || !isRecoveryVerb(verb)) {
    throw fail(
      'USAGE',
      `not a recovery verb: ${JSON.stringify(verb)} (${RECOVERY_VERBS.join(', ')})`,
    );
  }
  const host = checkedHost(core, name, target.host);
  if (typeof target.user !== 'string' || !USER_PATTERN.test(target.user)) {
    throw fail(
      'USAGE',
      `ssh user of ${name} refused: ${JSON.stringify(target.user)} is not a user name ([a-z_][a-z0-9_-]*)`,
    );
  }
  if (!Number.isInteger(target.port) || target.port < 1 || target.port > 65535) {
    throw fail('USAGE', `ssh port of ${name} refused: ${String(target.port)} is not a port`);
  }
  const pin = pinnedKey(core, name, target.hostKey);
  const privateKey = await readIdentityFile(core, target.identityFile);

  // 2. Connect: the host key is checked in the key exchange, before authentication.
  const { NodeSSH } = await import('node-ssh');
  const ssh = new NodeSSH();
  let offered: Buffer | undefined;
  const where = `${target.user}@${target.host} port ${target.port}`;
  try {
    await ssh.connect({
      host,
      port: target.port,
      username: target.user,
      privateKey,
      authHandler: ['publickey'],
      tryKeyboard: false,
      agentForward: false,
      readyTimeout: settings.readyTimeoutMs,
      keepaliveInterval: settings.keepaliveIntervalMs,
      keepaliveCountMax: 3,
      algorithms: { serverHostKey: [...(HOST_KEY_ALGORITHMS[pin.type] ?? [pin.type])] },
      hostVerifier: (key: unknown): boolean => {
        if (!Buffer.isBuffer(key)) return false;
        offered = Buffer.from(key);
        return blobType(key) === pin.type && key.equals(pin.blob);
      },
    });
  } catch (error) {
    ssh.dispose();
    throw connectFailure(core, error, { name, where, pin, offered, target });
  }

  // 3. One exec of the verb; stdin streamed and ended; output collected within bounds.
  const connection = ssh.connection as unknown as Ssh2Client;
  let connectionError: Error | undefined;
  connection.on('error', (error) => {
    connectionError = error;
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let stdoutBytes = 0;
  let stderrBytes = 0;
  let stderrCut = false;
  let overflow = false;
  let timedOut = false;
  let channel: Ssh2Channel | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    channel?.close();
    ssh.dispose();
  }, settings.timeoutMs);
  try {
    const response = await ssh.execCommand(verb, {
      ...(stdin === undefined ? {} : { stdin: Readable.from(chunks(stdin)) }),
      execOptions: {},
      noTrim: true,
      onChannel: (opened: Ssh2Channel) => {
        channel = opened;
        opened.on('error', (error) => {
          connectionError ??= error;
        });
      },
      onStdout: (chunk: Buffer) => {
        if (overflow) return;
        stdoutBytes += chunk.length;
        if (stdoutBytes > settings.maxStdoutBytes) {
          overflow = true;
          channel?.close();
          return;
        }
        stdout.push(chunk);
      },
      onStderr: (chunk: Buffer) => {
        const room = settings.maxStderrBytes - stderrBytes;
        if (room <= 0) {
          stderrCut = true;
          return;
        }
        const kept = chunk.subarray(0, room);
        stderrCut ||= kept.length < chunk.length;
        stderr.push(kept);
        stderrBytes += kept.length;
      },
    });
    if (timedOut) {
      throw fail(
        'REQUEST_TIMEOUT',
        `${verb} on ${name} (${where}) did not finish within ${settings.timeoutMs} ms: the connection was closed`,
      );
    }
    if (overflow) {
      throw fail(
        'RESPONSE_INVALID',
        `${verb} on ${name} (${where}): the receiver wrote more than ${settings.maxStdoutBytes} bytes on stdout; the answer was not used`,
      );
    }
    if (typeof response.code !== 'number') {
      const why = response.signal
        ? `the receiver was ended by ${response.signal}`
        : connectionError
          ? `the connection failed (${connectionError.message})`
          : 'the session ended without an exit status';
      throw fail('HOST_UNREACHABLE', `${verb} on ${name} (${where}): ${why}`);
    }
    return {
      exitCode: response.code,
      stdout: Buffer.concat(stdout).toString('utf8'),
      stderr: Buffer.concat(stderr).toString('utf8') + (stderrCut ? '\n[stderr truncated]\n' : ''),
    };
  } catch (error) {
    if (core.isFleetError(error)) throw error;
    if (timedOut) {
      throw fail(
        'REQUEST_TIMEOUT',
        `${verb} on ${name} (${where}) did not finish within ${settings.timeoutMs} ms: the connection was closed`,
      );
    }
    throw fail(
      'HOST_UNREACHABLE',
      `${verb} on ${name} (${where}): ${errorMessage(error)} (the receiver may not have run)`,
    );
  } finally {
    clearTimeout(timer);
    ssh.dispose();
  }
}

function* chunks(buffer: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < buffer.length; offset += STDIN_CHUNK_BYTES) {
    yield buffer.subarray(offset, offset + STDIN_CHUNK_BYTES);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The host as ssh2 connects to it; refuses anything that is not a plain name or address. */
function checkedHost(core: Core, name: string, host: unknown): string {
  const refuse = (why: string) =>
    new core.FleetError(
      'USAGE',
      `ssh host of ${name} refused: ${JSON.stringify(host)} ${why} (a host name or an IP address only)`,
    );
  if (typeof host !== 'string' || host === '') throw refuse('is empty');
  if (host.startsWith('-')) throw refuse('starts with "-" (an option)');
  if (!HOST_PATTERN.test(host)) throw refuse('holds characters a host name cannot');
  const bracketed = host.startsWith('[');
  if (bracketed !== host.endsWith(']')) throw refuse('has an unbalanced bracket');
  if (bracketed && !host.includes(':')) throw refuse('brackets a non-IPv6 address');
  return bracketed ? host.slice(1, -1) : host;
}

function pinnedKey(core: Core, name: string, hostKey: string | undefined): OpenSshPublicKey {
  const how =
    `fleet never trusts a host key on first use: read the node's key out of band (on the node: ` +
    `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) and pin its public key as ` +
    `hosts.${name}.ssh.hostKey in fleet.yaml (type and base64, as in the .pub file)`;
  if (hostKey === undefined || hostKey.trim() === '') {
    throw new core.FleetError('HOSTKEY_UNKNOWN', `no pinned SSH host key for ${name}: ${how}`);
  }
  const key = parseOpenSshPublicKey(hostKey);
  if (key === undefined || !Object.hasOwn(HOST_KEY_ALGORITHMS, key.type)) {
    throw new core.FleetError(
      'HOSTKEY_UNKNOWN',
      `the pinned SSH host key of ${name} is not a usable OpenSSH public key (ssh-ed25519, ecdsa-sha2-nistp*, ssh-rsa): ${how}`,
    );
  }
  return key;
}

async function readIdentityFile(core: Core, path: string): Promise<string> {
  if (typeof path !== 'string' || !isAbsolute(path)) {
    throw new core.FleetError(
      'CREDENTIALS_INVALID',
      `the SSH identity file must be an absolute path, not ${JSON.stringify(path)}`,
    );
  }
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new core.FleetError(
      'CREDENTIALS_MISSING',
      code === 'ENOENT'
        ? `no SSH identity file at ${path}`
        : `cannot read the SSH identity file ${path}: ${code ?? errorMessage(error)}`,
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_IDENTITY_FILE_BYTES) {
      throw new core.FleetError(
        'CREDENTIALS_INVALID',
        `the SSH identity file ${path} is not a private key file`,
      );
    }
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
      const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
      throw new core.FleetError(
        'CREDENTIALS_INSECURE',
        `the SSH identity file ${path} has mode ${mode}: it must not be readable by group or others (chmod 600 ${path})`,
      );
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

interface FailureContext {
  readonly name: string;
  readonly where: string;
  readonly pin: OpenSshPublicKey;
  readonly offered: Buffer | undefined;
  readonly target: RecoveryTarget;
}

function connectFailure(core: Core, error: unknown, context: FailureContext): FleetErrorClass {
  const { name, where, pin, offered, target } = context;
  const message = errorMessage(error);
  const level = (error as { level?: unknown } | null)?.level;
  const pinned = `${pin.type} ${sshFingerprint(pin.blob)}`;
  const field =
    target.name === undefined ? "the host's ssh.hostKey" : `hosts.${target.name}.ssh.hostKey`;
  const advice =
    `nothing was sent. If the host was re-installed, verify its new key out of band and update ` +
    `${field} in fleet.yaml; otherwise treat this as an attack (someone in the middle)`;
  if (offered !== undefined && !offered.equals(pin.blob)) {
    return new core.FleetError(
      'HOSTKEY_MISMATCH',
      `SSH host key of ${name} (${where}) does not match the pinned key: the host offered ` +
        `${blobType(offered) ?? 'an unknown key type'} ${sshFingerprint(offered)}, fleet.yaml pins ${pinned}; ${advice}`,
    );
  }
  if (/Signature verification failed/.test(message)) {
    return new core.FleetError(
      'HOSTKEY_MISMATCH',
      `SSH host of ${name} (${where}) presented the pinned key ${pinned} but could not prove it holds its private key; ${advice}`,
    );
  }
  if (/no matching host key format/.test(message)) {
    return new core.FleetError(
      'HOSTKEY_MISMATCH',
      `SSH host key of ${name} (${where}) does not match the pinned key: the host offers no ${pin.type} key, fleet.yaml pins ${pinned}; ${advice}`,
    );
  }
  if (level === 'client-authentication') {
    return new core.FleetError(
      'AUTH_INVALID',
      `${where} refused the recovery key ${target.identityFile} (is its public key in the node's authorized_keys, as the fleet-bootstrap forced-command line?)`,
    );
  }
  if (/Cannot parse privateKey|does not contain a \(valid\) private key/.test(message)) {
    return new core.FleetError(
      'CREDENTIALS_INVALID',
      `the SSH identity file ${target.identityFile} is not a usable private key (${message}); it must be an unencrypted OpenSSH or PEM private key`,
    );
  }
  return new core.FleetError(
    'HOST_UNREACHABLE',
    `cannot reach ${name} over SSH (${where}): ${message}`,
  );
}
