/**
 * The operator's credentials file (contract §3): one token per host, outside the repo, mode 0600.
 * The mode is checked on the open descriptor (`fstat`), not the path, so a file swapped after the
 * check is never read.
 */
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '../errors.js';
import { zodProblems } from '../zod-problems.js';
import { credentialsSchema, type Credentials } from './schema.js';
import { parseStrictJson } from '../json.js';

export function defaultCredentialsPath(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  return env['FLEET_CREDENTIALS'] || join(home, '.config', 'fleet', 'credentials.json');
}

export async function loadCredentials(
  path: string,
  platform: NodeJS.Platform = process.platform,
): Promise<Credentials> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new FleetError(
      'CREDENTIALS_MISSING',
      code === 'ENOENT'
        ? `no credentials file at ${path} (set FLEET_CREDENTIALS or create it, mode 0600)`
        : `cannot read the credentials file ${path}: ${code ?? String(error)}`,
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new FleetError('CREDENTIALS_INVALID', `credentials file ${path} is not a regular file`);
    }
    if (platform !== 'win32' && (stats.mode & 0o077) !== 0) {
      const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
      throw new FleetError(
        'CREDENTIALS_INSECURE',
        `credentials file ${path} has mode ${mode}: it must not be readable by group or others (chmod 600 ${path})`,
      );
    }
    const text = await handle.readFile('utf8');
    const value = parseStrictJson(text, path, 'CREDENTIALS_INVALID');
    const result = credentialsSchema.safeParse(value);
    if (!result.success) {
      throw new FleetError('CREDENTIALS_INVALID', `credentials file ${path} is invalid`, {
        problems: zodProblems(result.error, path),
      });
    }
    return result.data;
  } finally {
    await handle.close();
  }
}

/** The token for one host; `CREDENTIALS_MISSING` (exit 4) when there is none. */
export function tokenFor(credentials: Credentials, host: string, path: string): string {
  const entry = Object.hasOwn(credentials.hosts, host) ? credentials.hosts[host] : undefined;
  if (!entry) throw new FleetError('CREDENTIALS_MISSING', `no token for host ${host} in ${path}`);
  return entry.token;
}

/**
 * The private key file of a host's SSH recovery path (`hosts.<host>.ssh.identityFile`, an
 * absolute path); `CREDENTIALS_MISSING` (exit 4) when the host has none.
 */
export function sshIdentityFor(credentials: Credentials, host: string, path: string): string {
  const entry = Object.hasOwn(credentials.hosts, host) ? credentials.hosts[host] : undefined;
  if (!entry?.ssh) {
    throw new FleetError(
      'CREDENTIALS_MISSING',
      `no ssh.identityFile for host ${host} in ${path} (the recovery path's private key, by absolute path)`,
    );
  }
  return entry.ssh.identityFile;
}
