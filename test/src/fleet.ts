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
      env: { OCLIF_SKIP_NEW_VERSION_CHECK: 'true', ...env },
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
export async function tempDir(prefix = 'fleet-test-'): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}
