/**
 * What the SSH recovery path checks before a socket is opened (ssh.ts): the verb, the host, user
 * and port as plain words (no `-o…`, `;`, `%`), the pinned host key (never trust on first use) and
 * the identity file (contract §12; reliability catalogue "Host key pinning").
 */
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { FleetError } from '@fleet/core';
import { parseOpenSshPublicKey, type OpenSshPublicKey } from './ssh-keys.js';
import { RECOVERY_VERBS, isRecoveryVerb } from './verbs.js';

/** Where a recovery verb goes over SSH: a host of fleet.yaml and the operator's key for it. */
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

/** A recovery target once checked: what connecting to it needs. */
export interface CheckedTarget {
  /** The host's name for messages. */
  readonly name: string;
  /** The host as ssh2 connects to it (an IPv6 address without its brackets). */
  readonly host: string;
  /** `user@host port N`, for messages. */
  readonly where: string;
  readonly pin: OpenSshPublicKey;
  readonly privateKey: string;
}

/** Private key files are small; anything larger is not one. */
const MAX_IDENTITY_FILE_BYTES = 64 * 1024;

/** The host key algorithms that present a key of each pinnable type. */
export const HOST_KEY_ALGORITHMS: Readonly<Record<string, readonly string[]>> = {
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

/** Checks `verb` and `target`, reads the identity file; `USAGE`, `HOSTKEY_UNKNOWN`, `CREDENTIALS_*`. */
export async function checkedTarget(target: RecoveryTarget, verb: unknown): Promise<CheckedTarget> {
  const name = target.name ?? target.host;
  if (typeof verb !== 'string' || !isRecoveryVerb(verb)) {
    throw new FleetError(
      'USAGE',
      `not a recovery verb: ${JSON.stringify(verb)} (${RECOVERY_VERBS.join(', ')})`,
    );
  }
  const host = checkedHost(name, target.host);
  if (typeof target.user !== 'string' || !USER_PATTERN.test(target.user)) {
    throw new FleetError(
      'USAGE',
      `ssh user of ${name} refused: ${JSON.stringify(target.user)} is not a user name ([a-z_][a-z0-9_-]*)`,
    );
  }
  if (!Number.isInteger(target.port) || target.port < 1 || target.port > 65535) {
    throw new FleetError(
      'USAGE',
      `ssh port of ${name} refused: ${String(target.port)} is not a port`,
    );
  }
  const pin = pinnedKey(name, target.hostKey);
  const privateKey = await readIdentityFile(target.identityFile);
  const where = `${target.user}@${target.host} port ${target.port}`;
  return { name, host, where, pin, privateKey };
}

/** The host as ssh2 connects to it; refuses anything that is not a plain name or address. */
function checkedHost(name: string, host: unknown): string {
  const refuse = (why: string) =>
    new FleetError(
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

function pinnedKey(name: string, hostKey: string | undefined): OpenSshPublicKey {
  const how =
    `fleet never trusts a host key on first use: read the node's key out of band (on the node: ` +
    `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) and pin its public key as ` +
    `hosts.${name}.ssh.hostKey in fleet.yaml (type and base64, as in the .pub file)`;
  if (hostKey === undefined || hostKey.trim() === '') {
    throw new FleetError('HOSTKEY_UNKNOWN', `no pinned SSH host key for ${name}: ${how}`);
  }
  const key = parseOpenSshPublicKey(hostKey);
  if (key === undefined || !Object.hasOwn(HOST_KEY_ALGORITHMS, key.type)) {
    throw new FleetError(
      'HOSTKEY_UNKNOWN',
      `the pinned SSH host key of ${name} is not a usable OpenSSH public key (ssh-ed25519, ecdsa-sha2-nistp*, ssh-rsa): ${how}`,
    );
  }
  return key;
}

async function readIdentityFile(path: string): Promise<string> {
  if (typeof path !== 'string' || !isAbsolute(path)) {
    throw new FleetError(
      'CREDENTIALS_INVALID',
      `the SSH identity file must be an absolute path, not ${JSON.stringify(path)}`,
    );
  }
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new FleetError(
      'CREDENTIALS_MISSING',
      code === 'ENOENT'
        ? `no SSH identity file at ${path}`
        : `cannot read the SSH identity file ${path}: ${code ?? errorMessage(error)}`,
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_IDENTITY_FILE_BYTES) {
      throw new FleetError(
        'CREDENTIALS_INVALID',
        `the SSH identity file ${path} is not a private key file`,
      );
    }
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
      const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
      throw new FleetError(
        'CREDENTIALS_INSECURE',
        `the SSH identity file ${path} has mode ${mode}: it must not be readable by group or others (chmod 600 ${path})`,
      );
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
