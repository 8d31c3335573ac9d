/**
 * What the fake supervisors share: where they keep their state, which faults are switched on, a
 * call log, and atomic JSON files. See README.md, "Fake supervisors".
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** The state directory of every fake supervisor (default: `$HOME/.fleet-fake-supervisor`). */
export const FAKE_SUPERVISOR_DIR_ENV = 'FLEET_FAKE_SUPERVISOR_DIR';
/** Comma-separated faults to model (also read from `<state dir>/faults`, one per line). */
export const FAKE_SUPERVISOR_FAULTS_ENV = 'FLEET_FAKE_SUPERVISOR_FAULTS';

/**
 * Faults the fakes model (catalogue 54):
 * - `no-linger`: `loginctl show-user` reports `Linger=no` (user units die at logout);
 * - `no-bus`: every `systemctl --user` fails to reach the user manager (no `XDG_RUNTIME_DIR` /
 *   user bus, as in a bare SSH forced-command session);
 * - `daemon-reload-ignored`: `daemon-reload` succeeds but reloads nothing, so a changed unit stays
 *   `NeedDaemonReload=yes`;
 * - `start-fails`: `systemctl start|restart` fail (the unit ends `failed`); `schtasks /Run` says
 *   it attempted the run, but the program never starts (Last Result 0x80070002);
 * - `no-gui-session`: no user is logged in at the GUI, so launchd's `gui/<uid>` domain does not
 *   exist and `launchctl bootstrap gui/<uid>` fails (error 125).
 */
export const FAKE_FAULTS = [
  'no-linger',
  'no-bus',
  'daemon-reload-ignored',
  'start-fails',
  'no-gui-session',
] as const;
export type FakeFault = (typeof FAKE_FAULTS)[number];

export type Env = Readonly<Record<string, string | undefined>>;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export const ok = (stdout = ''): CliResult => ({ code: 0, stdout, stderr: '' });
export const fail = (code: number, stderr: string, stdout = ''): CliResult => ({
  code,
  stdout,
  stderr: stderr.endsWith('\n') ? stderr : `${stderr}\n`,
});

export function stateRoot(env: Env): string {
  return env[FAKE_SUPERVISOR_DIR_ENV] || join(env['HOME'] || homedir(), '.fleet-fake-supervisor');
}

export function activeFaults(env: Env): Set<string> {
  const faults = new Set<string>();
  for (const name of (env[FAKE_SUPERVISOR_FAULTS_ENV] ?? '').split(','))
    if (name.trim()) faults.add(name.trim());
  try {
    for (const line of readFileSync(join(stateRoot(env), 'faults'), 'utf8').split('\n')) {
      if (line.trim()) faults.add(line.trim());
    }
  } catch {
    // no faults file
  }
  return faults;
}

export function readJson<T>(path: string, fallback: T): T {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return fallback;
  }
}

/**
 * Writes `value` to `path` atomically. `createDirectory: false` is for a run's monitor: the test
 * that removes the state directory (with its home) must find it gone, not made again by a monitor
 * that was writing at that moment; the write then fails with ENOENT.
 */
export function writeJson(
  path: string,
  value: unknown,
  { createDirectory = true }: { readonly createDirectory?: boolean } = {},
): void {
  if (createDirectory) mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temp, path);
}

/** Appends one JSON line per invocation to `<dir>/calls.jsonl` (for tests to assert on). */
export function logCall(dir: string, argv: readonly string[]): void {
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, 'calls.jsonl'), `${JSON.stringify(argv)}\n`);
}

/** The environment a supervised runtime gets: the fake's own, without the fakes' knobs. */
export function runtimeEnv(
  env: Env,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !key.startsWith('FLEET_FAKE_')) out[key] = value;
  }
  return { ...out, ...extra };
}

/** True when `pid` is a live process (a zombie is dead). */
export function processAlive(pid: number | null | undefined): boolean {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** Runs a fake's CLI function as a process: writes its output and sets the exit code. */
export async function runMain(
  main: (argv: string[], env: Env) => Promise<CliResult>,
): Promise<void> {
  const result = await main(process.argv.slice(2), process.env);
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.stderr) process.stderr.write(result.stderr);
  process.exitCode = result.code;
}
