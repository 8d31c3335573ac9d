/**
 * Helpers shared by the integration tests: run the real `fleet` binary as a child process (exactly
 * as an operator does) and make temporary directories that are cleaned up.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (test/dist/src → ../../..). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const FLEET_BIN = join(ROOT, 'packages', 'cli', 'bin', 'run.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');

export interface FleetRun {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface FleetRunOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly input?: string;
}

/** Runs `fleet ARGS…` with a clean, isolated environment (its own config and data dirs). */
export function fleet(args: readonly string[], options: FleetRunOptions = {}): Promise<FleetRun> {
  return new Promise((resolvePromise, reject) => {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, ...options.env })) {
      if (value !== undefined) env[key] = value;
    }
    delete env['FLEET_REPO'];
    if (options.env?.['FLEET_REPO'] !== undefined) env['FLEET_REPO'] = options.env['FLEET_REPO'];
    const child = spawn(process.execPath, [FLEET_BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      // Plain output whatever the environment: CI=true makes colour libraries emit ANSI codes.
      // Each call in its own process unless a test asks for the resident (a resident the person
      // running the tests has started would otherwise run them: docs/resident.md).
      env: {
        OCLIF_SKIP_NEW_VERSION_CHECK: 'true',
        ...env,
        FLEET_RESIDENT: options.env?.['FLEET_RESIDENT'] ?? 'off',
        NO_COLOR: '1',
        FORCE_COLOR: '0',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ exitCode: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Parses stdout as exactly one JSON document (the --json contract). */
export function json<T = Record<string, unknown>>(run: FleetRun): T {
  return JSON.parse(run.stdout) as T;
}

/** A temporary directory, removed by the returned cleanup. */
export async function tempDir(
  prefix = 'fleet-test-',
): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

// ---- lab helpers (issue 3: the lab) -------------------------------------------------------------
// (Imports are hoisted: this one sits with the helpers it serves, so the block is self-contained.)
import { readFileSync, readdirSync } from 'node:fs';

/** Alive and not a zombie (a zombie has exited; its parent just has not reaped it yet). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S …"; the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** Every pid a lab in `dir` recorded: lab.json's controllers, each supervisor.json's supervisor and controller. */
export function labPids(dir: string): number[] {
  const pids = new Set<number>();
  const read = (path: string): Record<string, unknown> | undefined => {
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const lab = read(join(dir, 'lab.json')) as { hosts?: { pid: number }[] } | undefined;
  for (const host of lab?.hosts ?? []) pids.add(host.pid);
  let nodes: string[] = [];
  try {
    nodes = readdirSync(join(dir, 'nodes'));
  } catch {
    // no nodes: nothing started
  }
  for (const node of nodes) {
    const state = read(join(dir, 'nodes', node, 'supervisor.json')) as
      { pid?: number | null; supervisorPid?: number } | undefined;
    if (typeof state?.pid === 'number') pids.add(state.pid);
    if (typeof state?.supervisorPid === 'number') pids.add(state.supervisorPid);
  }
  return [...pids];
}

/**
 * Tears a lab down whatever state a failed test left it in: `fleet lab down`, then SIGKILL for any
 * recorded pid whose command line still names `dir` (never another process).
 */
export async function destroyLab(dir: string): Promise<void> {
  await fleet(['lab', 'down', '--dir', dir]).catch(() => undefined);
  for (const pid of labPids(dir)) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Polls `check` every 50 ms until it returns true or `timeoutMs` passes. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
