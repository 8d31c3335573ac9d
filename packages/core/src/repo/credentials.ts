/**
 * The operator's credentials file (contract §3): one token per host, outside the repo, mode 0600.
 * The mode is checked on the open descriptor (`fstat`), not the path, so a file swapped after the
 * check is never read.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type * as z from 'zod';
import { FleetError, type Problem } from '../errors.js';
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
        problems: zodProblems(result.error, path).map((problem, i) =>
          shortTokenProblem(result.error.issues[i], problem),
        ),
      });
    }
    return result.data;
  } finally {
    await handle.close();
  }
}

/**
 * A token cut short (a partial paste) says so for its host, instead of zod's "Too small: expected
 * string to have >=16 characters": the file and the field stay, the token itself never appears.
 */
function shortTokenProblem(issue: z.core.$ZodIssue | undefined, problem: Problem): Problem {
  const [hosts, host, field] = issue?.path ?? [];
  if (issue?.code !== 'too_small' || hosts !== 'hosts' || field !== 'token') return problem;
  return {
    ...problem,
    message: `the token for host ${String(host)} is too short (fleet's tokens have ${String(issue.minimum)} characters at least): paste the whole token \`fleet token issue\` printed`,
  };
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

/** An update of the credentials file prepared before the node is asked (see below). */
export interface CredentialsUpdate {
  /** The file as it was read (mode checked). */
  readonly credentials: Credentials;
  /**
   * Applies `change` to the file as it is *now* (read again, so an edit made meanwhile by another
   * process is kept) and replaces it atomically: the prepared temp file gets the new text, fsync,
   * rename over the file, fsync of the directory. Nothing is changed when it fails.
   */
  commit(change: (current: Credentials) => Credentials): Promise<void>;
  /** Removes the prepared temp file; the credentials file is untouched. */
  abort(): Promise<void>;
}

/**
 * Prepares a replacement of the operator's credentials file (contract §3, §5 `fleet token rotate
 * --host`): the file is read (0600, refused if wider: `CREDENTIALS_INSECURE`) and a temp file is
 * created exclusively beside it, mode 0600, *before* anything irreversible happens — a new token
 * the node mints is shown once, so the place it is written to must be known to work first.
 */
export async function prepareCredentialsUpdate(
  path: string,
  platform: NodeJS.Platform = process.platform,
): Promise<CredentialsUpdate> {
  const credentials = await loadCredentials(path, platform);
  const temp = join(
    dirname(path),
    `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  let handle;
  try {
    handle = await open(temp, 'wx', 0o600);
  } catch (error) {
    throw new FleetError(
      'CREDENTIALS_INVALID',
      `cannot write beside the credentials file ${path}: ${String((error as NodeJS.ErrnoException).code ?? error)}; nothing was changed`,
    );
  }
  const file = handle;
  let done = false;
  const abort = async (): Promise<void> => {
    if (done) return;
    done = true;
    await file.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
  };
  return {
    credentials,
    abort,
    async commit(change) {
      try {
        const next = credentialsSchema.parse(change(await loadCredentials(path, platform)));
        if (platform !== 'win32') await file.chmod(0o600);
        await file.writeFile(`${JSON.stringify(next, null, 2)}\n`);
        await file.sync();
        await file.close();
        done = true;
        await rename(temp, path);
      } catch (error) {
        await abort();
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      if (platform !== 'win32') {
        const directory = await open(dirname(path), 'r');
        try {
          await directory.sync();
        } finally {
          await directory.close();
        }
      }
    },
  };
}
