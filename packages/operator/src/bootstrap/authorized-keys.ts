/**
 * The node's `authorized_keys` line for the SSH recovery path (contract §12, `bootstrap apply
 * --recover`). Operators install it in the node user's `~/.ssh/authorized_keys`:
 *
 * ```
 * restrict,command="/usr/bin/node /opt/fleet/bin/run.js bootstrap receive --home /home/fleet" ssh-ed25519 AAAA… fleet-bootstrap
 * ```
 *
 * - `restrict` turns off PTY allocation, agent/X11/port forwarding and `~/.ssh/rc` (OpenSSH ≥
 *   7.2), so the key can do nothing but run the command;
 * - `command="…"` is a forced command: whatever the client asks to run, sshd runs this instead
 *   and passes the request only as data in `SSH_ORIGINAL_COMMAND`, which `fleet bootstrap
 *   receive` compares with its verb allowlist (`version`, `status`, `apply`);
 * - sshd runs the forced command through the user's shell, so every argument here is either
 *   plain (`[A-Za-z0-9_./:=@%+,-]`) or single-quoted, and arguments holding `"`, `\`, `'` or a
 *   control character are refused rather than escaped;
 * - keep `PermitUserEnvironment no` (OpenSSH's default) in the node's sshd_config: an
 *   `environment=` option could otherwise set variables for the receiver (`NODE_OPTIONS`); the
 *   receiver checks it with `sshd -T` and refuses otherwise (sshd-check.ts).
 */
import { parseOpenSshPublicKey } from './ssh-keys.js';

export interface AuthorizedKeysLineInput {
  /** The operator's public key, `ssh-ed25519 AAAA…` (a trailing comment is dropped). */
  readonly publicKey: string;
  /** The forced command as argv: the node binary, the CLI entry, `bootstrap receive --home DIR`. */
  readonly command: readonly string[];
}

/** The comment every generated line ends with. */
export const AUTHORIZED_KEYS_COMMENT = 'fleet-bootstrap';

const KEY_TYPES = new Set([
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
]);

const PLAIN_ARGUMENT = /^[A-Za-z0-9_./:=@%+,-]+$/;

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function quoteArgument(arg: string, index: number): string {
  if (arg === '') throw new Error(`authorizedKeysLine: command argument ${index} is empty`);
  if (hasControl(arg) || /["\\']/.test(arg)) {
    throw new Error(
      `authorizedKeysLine: command argument ${index} (${JSON.stringify(arg)}) holds a quote, a backslash or a control character`,
    );
  }
  return PLAIN_ARGUMENT.test(arg) ? arg : `'${arg}'`;
}

/**
 * `restrict,command="<argv, shell-quoted>" <type> <base64> fleet-bootstrap`. Pure: throws an
 * `Error` for a key that is not one OpenSSH public key or a command it cannot quote safely.
 */
export function authorizedKeysLine(input: AuthorizedKeysLineInput): string {
  if (hasControl(input.publicKey)) {
    throw new Error('authorizedKeysLine: the public key holds a control character (one line only)');
  }
  const key = parseOpenSshPublicKey(input.publicKey);
  if (key === undefined || !KEY_TYPES.has(key.type)) {
    throw new Error(
      'authorizedKeysLine: the public key must be one OpenSSH public key (ssh-ed25519 AAAA…), no options',
    );
  }
  if (input.command.length === 0) throw new Error('authorizedKeysLine: the command is empty');
  const command = input.command.map(quoteArgument).join(' ');
  return `restrict,command="${command}" ${key.type} ${key.blob.toString('base64')} ${AUTHORIZED_KEYS_COMMENT}`;
}
