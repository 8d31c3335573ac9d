/**
 * The operator side of the SSH recovery path (contract §12: `bootstrap apply --recover` for a host
 * whose controller is unavailable; reliability catalogue "Host key pinning").
 *
 * One connection runs one verb of the node's forced command (`fleet bootstrap receive`):
 * - the host key must equal fleet.yaml's pinned `hostKey`, byte for byte (type and key blob): it
 *   is checked in the key exchange, so a mismatch aborts before authentication, before any
 *   channel is opened and before anything is sent (`HOSTKEY_MISMATCH`); no pin is
 *   `HOSTKEY_UNKNOWN`, never trust on first use; known_hosts files are never read or written;
 * - host and user are checked syntactically before connecting (no `-o…`, `;`, `%`;
 *   ssh-preflight.ts);
 * - public-key authentication with the credentials file's identity file only: no agent, no
 *   password or keyboard-interactive, no PTY, no agent/X11/port forwarding;
 * - bounded: handshake timeout, keepalives, an overall timeout, capped stdout and stderr.
 *
 * node-ssh (and ssh2 under it) is imported inside the function: CLI start-up stays fast.
 */
import { Readable } from 'node:stream';
import type { FleetError as FleetErrorClass } from '@fleet/core';
import type { NodeSSH, SSHExecCommandResponse } from 'node-ssh';
import * as core from '@fleet/core';
import {
  HOST_KEY_ALGORITHMS,
  checkedTarget,
  errorMessage,
  type CheckedTarget,
  type RecoveryTarget,
} from './ssh-preflight.js';
import { blobType, sshFingerprint, type OpenSshPublicKey } from './ssh-keys.js';
import type { RecoveryVerb } from './verbs.js';

export type { RecoveryTarget };

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

/** The chunk size stdin is streamed in (the channel applies the SSH window). */
const STDIN_CHUNK_BYTES = 64 * 1024;

/** The parts of ssh2's client and channel used here (ssh2 ships no types of its own). */
interface Ssh2Channel {
  on(event: 'error', listener: (error: Error) => void): this;
  close(): void;
}
interface Ssh2Client {
  on(event: 'error', listener: (error: Error) => void): this;
}

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
  const settings: RecoverySettings = { ...DEFAULTS, ...options };
  // 1. Everything checked before a socket is opened.
  const checked = await checkedTarget(target, verb);
  // 2. Connect: the host key is checked in the key exchange, before authentication.
  const ssh = await connected(target, checked, settings);
  // 3. One exec of the verb; stdin streamed and ended; output collected within bounds.
  return await execVerb(ssh, {
    verb,
    stdin,
    settings,
    name: checked.name,
    where: checked.where,
  });
}

type RecoverySettings = Required<RecoveryOptions>;

/** A connection whose host key is the pinned one, authenticated with the identity file alone. */
async function connected(
  target: RecoveryTarget,
  checked: CheckedTarget,
  settings: RecoverySettings,
): Promise<NodeSSH> {
  const { pin } = checked;
  // Lazy: only the SSH recovery path connects; `fleet bootstrap plan|status|apply` would load
  // node-ssh and ssh2 (+38 files) even when the controller answers (measured, README).
  const { NodeSSH } = await import('node-ssh');
  const ssh = new NodeSSH();
  let offered: Buffer | undefined;
  try {
    await ssh.connect({
      host: checked.host,
      port: target.port,
      username: target.user,
      privateKey: checked.privateKey,
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
    throw connectFailure(error, {
      name: checked.name,
      where: checked.where,
      pin,
      offered,
      target,
    });
  }
  return ssh;
}

/** One verb's run over a connection, for its messages and bounds. */
interface VerbRun {
  readonly verb: RecoveryVerb;
  readonly stdin: Buffer | undefined;
  readonly settings: RecoverySettings;
  readonly name: string;
  readonly where: string;
}

/** What the exec's callbacks and its timer learn while the verb runs. */
interface ExecState {
  channel: Ssh2Channel | undefined;
  connectionError: Error | undefined;
  timedOut: boolean;
}

/** Runs the verb over `ssh`, then disposes of it; its exit code and bounded output. */
async function execVerb(ssh: NodeSSH, run: VerbRun): Promise<RecoveryResult> {
  const state: ExecState = { channel: undefined, connectionError: undefined, timedOut: false };
  const connection = ssh.connection as unknown as Ssh2Client;
  connection.on('error', (error) => {
    state.connectionError = error;
  });
  const output = new BoundedOutput(run.settings, () => state.channel?.close());
  const timer = setTimeout(() => {
    state.timedOut = true;
    state.channel?.close();
    ssh.dispose();
  }, run.settings.timeoutMs);
  try {
    const response = await ssh.execCommand(run.verb, {
      ...(run.stdin === undefined ? {} : { stdin: Readable.from(chunks(run.stdin)) }),
      execOptions: {},
      noTrim: true,
      onChannel: (opened: Ssh2Channel) => {
        state.channel = opened;
        opened.on('error', (error) => {
          state.connectionError ??= error;
        });
      },
      onStdout: (chunk: Buffer) => output.onStdout(chunk),
      onStderr: (chunk: Buffer) => output.onStderr(chunk),
    });
    return verbResult(run, state, output, response);
  } catch (error) {
    if (core.isFleetError(error)) throw error;
    if (state.timedOut) throw timeoutError(run);
    throw new core.FleetError(
      'HOST_UNREACHABLE',
      `${run.verb} on ${run.name} (${run.where}): ${errorMessage(error)} (the receiver may not have run)`,
    );
  } finally {
    clearTimeout(timer);
    ssh.dispose();
  }
}

/** The verb's result once its session ended, or why it cannot be used. */
function verbResult(
  run: VerbRun,
  state: ExecState,
  output: BoundedOutput,
  response: Pick<SSHExecCommandResponse, 'code' | 'signal'>,
): RecoveryResult {
  const { verb, name, where } = run;
  if (state.timedOut) throw timeoutError(run);
  if (output.overflow) {
    throw new core.FleetError(
      'RESPONSE_INVALID',
      `${verb} on ${name} (${where}): the receiver wrote more than ${run.settings.maxStdoutBytes} bytes on stdout; the answer was not used`,
    );
  }
  if (typeof response.code !== 'number') {
    const why = response.signal
      ? `the receiver was ended by ${response.signal}`
      : state.connectionError
        ? `the connection failed (${state.connectionError.message})`
        : 'the session ended without an exit status';
    throw new core.FleetError('HOST_UNREACHABLE', `${verb} on ${name} (${where}): ${why}`);
  }
  return { exitCode: response.code, ...output.text() };
}

function timeoutError(run: VerbRun): FleetErrorClass {
  return new core.FleetError(
    'REQUEST_TIMEOUT',
    `${run.verb} on ${run.name} (${run.where}) did not finish within ${run.settings.timeoutMs} ms: the connection was closed`,
  );
}

/**
 * The verb's stdout and stderr within their bounds: more stdout than allowed closes the channel
 * and the answer is not used; stderr beyond its bound is dropped and said to be.
 */
class BoundedOutput {
  private readonly stdout: Buffer[] = [];
  private readonly stderr: Buffer[] = [];
  private stdoutBytes = 0;
  private stderrBytes = 0;
  private stderrCut = false;
  /** Whether stdout went over its bound. */
  overflow = false;

  constructor(
    private readonly limits: Pick<RecoverySettings, 'maxStdoutBytes' | 'maxStderrBytes'>,
    private readonly closeChannel: () => void,
  ) {}

  onStdout(chunk: Buffer): void {
    if (this.overflow) return;
    this.stdoutBytes += chunk.length;
    if (this.stdoutBytes > this.limits.maxStdoutBytes) {
      this.overflow = true;
      this.closeChannel();
      return;
    }
    this.stdout.push(chunk);
  }

  onStderr(chunk: Buffer): void {
    const room = this.limits.maxStderrBytes - this.stderrBytes;
    if (room <= 0) {
      this.stderrCut = true;
      return;
    }
    const kept = chunk.subarray(0, room);
    this.stderrCut ||= kept.length < chunk.length;
    this.stderr.push(kept);
    this.stderrBytes += kept.length;
  }

  text(): { stdout: string; stderr: string } {
    return {
      stdout: Buffer.concat(this.stdout).toString('utf8'),
      stderr:
        Buffer.concat(this.stderr).toString('utf8') +
        (this.stderrCut ? '\n[stderr truncated]\n' : ''),
    };
  }
}

function* chunks(buffer: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < buffer.length; offset += STDIN_CHUNK_BYTES) {
    yield buffer.subarray(offset, offset + STDIN_CHUNK_BYTES);
  }
}

interface FailureContext {
  readonly name: string;
  readonly where: string;
  readonly pin: OpenSshPublicKey;
  readonly offered: Buffer | undefined;
  readonly target: RecoveryTarget;
}

function connectFailure(error: unknown, context: FailureContext): FleetErrorClass {
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
