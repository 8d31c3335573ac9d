/**
 * The receiver's check of the sshd that runs it (contract §12; docs/runtime-lifecycle.md, "The
 * SSH recovery path"; catalogue 70b): with `PermitUserEnvironment` other than `no`, an
 * `environment=` option in authorized_keys or `~/.ssh/environment` sets variables for the forced
 * command — `NODE_OPTIONS`, `PATH`, `LD_PRELOAD` bend what the receiver runs; an `AcceptEnv`
 * pattern matching one of them lets the client send it. So `fleet bootstrap receive` asks sshd
 * itself for its effective configuration and refuses (`SSH_ENVIRONMENT_UNSAFE`) when either is
 * allowed, or when it cannot be told.
 *
 * How, as the node's user, without root:
 * - **Which sshd and config.** The listener is found among the receiver's ancestors (Linux
 *   `/proc/<pid>/stat` and `cmdline`, readable by every user): OpenSSH titles it `sshd: <path>
 *   <args> [listener] …`, so its binary and its `-f` are read from there. Elsewhere, or when no
 *   listener is found (sshd started by inetd or launchd with `-i`), `/usr/sbin/sshd` and
 *   `/etc/ssh/sshd_config`, OpenSSH's defaults.
 * - **`sshd -T` without the host keys.** `sshd -T` loads the host keys and exits with "no
 *   hostkeys available" when it cannot read them (they are root's, 0600). `-h KEY` adds a
 *   throwaway key the receiver makes (PEM P-256, in a 0700 temp dir, removed after), so `-T`
 *   prints the effective configuration of the config file — which the node's user must be able
 *   to read (Debian and macOS ship it 0644; one that is 0600 is a refusal naming the file).
 * - `PermitUserEnvironment` and `AcceptEnv` cannot be set in a `Match` block (sshd_config(5),
 *   "Match": neither is among the keywords allowed there), so no `-C` connection spec is needed.
 *
 * What this cannot do: the check runs inside the process it protects. A `NODE_OPTIONS` that
 * sshd already set has run its code before this check; the refusal then tells the operator
 * the node is misconfigured, it does not undo that. The check makes a misconfiguration loud at
 * the first request, before anything is staged.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Variables that bend what the receiver (node) and the programs it starts run. */
export const DANGEROUS_VARIABLES = [
  'PATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'DYLD_INSERT_LIBRARIES',
  'DYLD_LIBRARY_PATH',
  'BASH_ENV',
  'ENV',
] as const;

export const DEFAULT_SSHD = '/usr/sbin/sshd';
export const DEFAULT_SSHD_CONFIG = '/etc/ssh/sshd_config';

/** What `sshd -T` says about the environment a session may get. */
export interface SshdEnvironment {
  /** `permituserenvironment`: `no`, `yes`, or a pattern list. */
  readonly permitUserEnvironment: string | undefined;
  /** Every `acceptenv` pattern. */
  readonly acceptEnv: readonly string[];
}

/** The two keywords of `sshd -T` output (lower-case `keyword value` lines). */
export function parseSshdT(output: string): SshdEnvironment {
  let permitUserEnvironment: string | undefined;
  const acceptEnv: string[] = [];
  for (const line of output.split('\n')) {
    const [keyword, ...rest] = line.trim().split(/\s+/);
    if (keyword === 'permituserenvironment') permitUserEnvironment = rest.join(' ');
    if (keyword === 'acceptenv') acceptEnv.push(...rest);
  }
  return { permitUserEnvironment, acceptEnv };
}

/** OpenSSH's pattern match (`*`, `?`), for one pattern of a list. */
export function matchesPattern(name: string, pattern: string): boolean {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${regex}$`).test(name);
}

/** Why the environment sshd allows is unsafe for the receiver; `undefined` when it is not. */
export function judgeSshdEnvironment(found: SshdEnvironment, source: string): string | undefined {
  if (found.permitUserEnvironment === undefined) {
    return `sshd -T (${source}) printed no permituserenvironment`;
  }
  if (found.permitUserEnvironment !== 'no') {
    return `sshd (${source}) has PermitUserEnvironment ${found.permitUserEnvironment}: authorized_keys environment= or ~/.ssh/environment could set NODE_OPTIONS or PATH for this receiver; set PermitUserEnvironment no`;
  }
  // A negated pattern (`!X`) only narrows a list; counted as allowing nothing, which errs safe.
  const accepted = found.acceptEnv.filter((pattern) => !pattern.startsWith('!'));
  const bent = DANGEROUS_VARIABLES.filter((name) =>
    accepted.some((pattern) => matchesPattern(name, pattern)),
  );
  if (bent.length > 0) {
    return `sshd (${source}) accepts ${bent.join(', ')} from the client (AcceptEnv ${accepted.join(' ')}): a client could set them for this receiver; remove them from AcceptEnv`;
  }
  return undefined;
}

/**
 * The listener's binary and config from its process title (`sshd: /usr/sbin/sshd -D -f CFG
 * [listener] …`) or, before OpenSSH retitled it, its argv; `undefined` when this is no listener.
 */
export function listenerOf(cmdline: string): { sshd: string; config: string } | undefined {
  const args = cmdline.split('\0').filter((arg) => arg !== '');
  let words: string[];
  if (args.length === 1 && args[0]?.startsWith('sshd: ') && args[0].includes('[listener]')) {
    words = args[0].slice('sshd: '.length).split('[listener]')[0]?.trim().split(/\s+/) ?? [];
  } else if (args[0] !== undefined && /(^|\/)sshd$/.test(args[0]) && !args.includes('-i')) {
    words = args;
  } else {
    return undefined;
  }
  const [sshd, ...rest] = words;
  if (sshd === undefined || !sshd.startsWith('/')) return undefined;
  const at = rest.indexOf('-f');
  const config = at >= 0 ? rest[at + 1] : DEFAULT_SSHD_CONFIG;
  return config === undefined ? undefined : { sshd, config };
}

/** The sshd listener among this process's ancestors (Linux `/proc`), if one is found. */
async function findListener(): Promise<{ sshd: string; config: string } | undefined> {
  let pid = process.ppid;
  for (let depth = 0; depth < 16 && pid > 1; depth += 1) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
    if (cmdline === undefined) return undefined;
    const found = listenerOf(cmdline);
    if (found !== undefined) return found;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // Field 4 (ppid); fields 3 on follow the command name, which may hold spaces.
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isSafeInteger(pid)) return undefined;
  }
  return undefined;
}

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      // Nothing of this process's environment: a bent PATH or LD_PRELOAD reaches no further.
      { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, timeout: 10_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) {
          const said = stderr.trim().split('\n').slice(-1)[0] ?? '';
          reject(new Error(said === '' ? error.message : said));
        } else resolve(stdout);
      },
    );
  });
}

/**
 * Asks the sshd that runs this receiver for its effective configuration; resolves to why the
 * environment it allows is unsafe, or why it cannot be told, or `undefined` when it is safe.
 */
export async function checkSshdEnvironment(): Promise<string | undefined> {
  const listener = (process.platform === 'linux' ? await findListener() : undefined) ?? {
    sshd: DEFAULT_SSHD,
    config: DEFAULT_SSHD_CONFIG,
  };
  const source = `${listener.sshd} -f ${listener.config}`;
  const dir = await mkdtemp(join(tmpdir(), 'fleet-sshd-check-'));
  try {
    const key = join(dir, 'host_key');
    const { privateKey } = generateKeyPairSync('ec', {
      namedCurve: 'prime256v1',
      privateKeyEncoding: { type: 'sec1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await writeFile(key, privateKey, { mode: 0o600 });
    let output: string;
    try {
      output = await run(listener.sshd, ['-T', '-f', listener.config, '-h', key]);
    } catch (error) {
      return `PermitUserEnvironment cannot be checked: \`sshd -T\` (${source}) failed as this user (${(error as Error).message}); the node's user must be able to read the sshd configuration`;
    }
    return judgeSshdEnvironment(parseSshdT(output), source);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
