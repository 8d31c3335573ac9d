/**
 * A controller in a child process (test/fixtures/serve.js), for kill -9, umask and fault-injection
 * tests (strace, a mount namespace).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../test/fixtures/serve.js', import.meta.url));

export interface ChildController {
  readonly url: string;
  readonly process: ChildProcess;
  /** Resolves with the signal (or exit code) the child ended with. */
  readonly exited: Promise<NodeJS.Signals | number | null>;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /**
   * Runs the controller under another program: `[program, ...args]` before `node serve.js`, e.g.
   * `['strace', '-f', '-o', log, '-e', 'inject=…', '--']` or `['unshare', '-rm', 'sh', '-c', …]`.
   */
  readonly under?: readonly string[];
}

export function spawnController(
  home: string,
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<ChildController> {
  const argv = [...(options.under ?? []), process.execPath, SCRIPT];
  const child = spawn(argv[0] as string, argv.slice(1), {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', FIXTURE_HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Under another program the controller is a grandchild: its own process group lets `stop`
    // signal both (strace does not end its tracee on SIGTERM).
    detached: options.under !== undefined,
  });
  const terminate = () => {
    if (options.under !== undefined && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    else child.kill('SIGTERM');
  };
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? code));
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        resolve({
          url: line.trim(),
          process: child,
          exited,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) terminate();
            await exited;
          },
        });
      }
    });
    void exited.then((how) =>
      reject(new Error(`controller exited (${String(how)}) before serving: ${stderr}`)),
    );
  });
}
