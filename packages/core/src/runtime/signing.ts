/**
 * The operator's release signing (docs/releases.md, ADR 0019): an SSH signature — `ssh-keygen -Y
 * sign`, namespace `fleet-release` — over an artifact's exact bytes, made by the real tool with an
 * Ed25519 key. The key is `signing_ed25519` beside the credentials file, made with ssh-keygen on
 * first use, or one the operator names (`--signing-key FILE`: any Ed25519 OpenSSH private key).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { FleetError } from '../errors.js';
import { defaultCredentialsPath } from '../repo/credentials.js';

/** The SSH signature namespace of a release (`ssh-keygen -Y sign -n`). */
export const SIGNING_NAMESPACE = 'fleet-release';

export interface SigningKey {
  readonly privateKeyFile: string;
  /** `ssh-ed25519 AAAA…`, no comment: what fleet.yaml's `signing.keys` and node policies hold. */
  readonly publicKey: string;
}

/** The default key's path: `signing_ed25519` beside the credentials file (`credentials`). */
export function defaultSigningKeyFile(
  credentials: string = defaultCredentialsPath(process.env),
): string {
  return join(dirname(credentials), 'signing_ed25519');
}

/**
 * The signing key: `file`, else the default one. A missing key is made — the default one always,
 * a named one only with `create` (the lab's own); a key the operator named must exist.
 */
export async function signingKey(
  file?: string,
  options: { readonly create?: boolean } = {},
): Promise<SigningKey> {
  const privateKeyFile = resolve(file ?? defaultSigningKeyFile());
  if (!existsSync(privateKeyFile) && file !== undefined && options.create !== true) {
    throw new FleetError('CREDENTIALS_MISSING', `no signing key at ${privateKeyFile}`);
  }
  await ensureSshKey(privateKeyFile, 'fleet-release-signing');
  const line = await readFile(`${privateKeyFile}.pub`, 'utf8').catch(async () => {
    // No .pub beside it: derive the public key from the private one.
    const { stdout } = await promisify(execFile)('ssh-keygen', ['-y', '-f', privateKeyFile]);
    return stdout;
  });
  const [type, body] = line.trim().split(/\s+/);
  if (type !== 'ssh-ed25519' || body === undefined) {
    throw new FleetError(
      'USAGE',
      `${privateKeyFile} is not an Ed25519 key (${type ?? 'unreadable'}): releases are signed with Ed25519 only (ADR 0019)`,
    );
  }
  return { privateKeyFile, publicKey: `${type} ${body}` };
}

/**
 * Makes an Ed25519 OpenSSH key pair at `privateKeyFile` (and `.pub`) with the real ssh-keygen,
 * unless one is there; its directory is made 0700. fleet's own keys — the release signing key, the
 * recovery key — are made this way, never by hand-written key code.
 */
export async function ensureSshKey(privateKeyFile: string, comment: string): Promise<void> {
  if (existsSync(privateKeyFile)) return;
  await mkdir(dirname(privateKeyFile), { recursive: true, mode: 0o700 });
  await promisify(execFile)('ssh-keygen', [
    '-q',
    '-t',
    'ed25519',
    '-N',
    '',
    '-C',
    comment,
    '-f',
    privateKeyFile,
  ]).catch((error: unknown) => {
    throw new FleetError(
      'ACTION_FAILED',
      `cannot make the key ${privateKeyFile} with ssh-keygen (Debian: apt install openssh-client): ${error instanceof Error ? error.message : String(error)}`,
    );
  });
}

/** Signs `bytes` with the real ssh-keygen; returns the signature's one-line base64 body. */
export async function signArtifact(bytes: Buffer, key: SigningKey): Promise<string> {
  const { code, stdout, stderr } = await new Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
  }>((resolvePromise, reject) => {
    const child = spawn(
      'ssh-keygen',
      ['-q', '-Y', 'sign', '-f', key.privateKeyFile, '-n', SIGNING_NAMESPACE],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (exit) => resolvePromise({ code: exit, stdout: out, stderr: err }));
    child.stdin.end(bytes);
  }).catch((error: unknown) => {
    throw new FleetError(
      'ACTION_FAILED',
      `cannot run ssh-keygen to sign: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const body = stdout
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('-----'))
    .join('');
  if (code !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) {
    throw new FleetError(
      'ACTION_FAILED',
      `ssh-keygen -Y sign with ${key.privateKeyFile} failed (exit ${String(code)}): ${stderr.trim().split('\n').pop() ?? ''}`,
    );
  }
  return body;
}
