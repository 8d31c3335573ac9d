/**
 * A controller in a child process (test/fixtures/serve.js), for kill -9, umask and fault-injection
 * tests (strace, a mount namespace). Its home gets a node policy serving the fixture's domains when
 * it has none yet.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defaultNodePolicy, nodePolicyFile } from '@fleet/core';
import { writeNodePolicy } from '../../src/index.js';

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
   * A command the controller runs under (`['strace', '-f', …]`, `['sh', '-c', 'ulimit -f 16;
   * exec "$0" "$@"']`, `['unshare', '-m', …]`): it is run with the node binary and the serve
   * script appended. The child gets its own process group then, so `stop` signals the
   * controller too (strace does not end its tracee on SIGTERM).
   */
  readonly prefix?: readonly string[];
}

export async function spawnController(
  home: string,
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<ChildController> {
  if (
    !(await access(nodePolicyFile(home)).then(
      () => true,
      () => false,
    ))
  ) {
    await writeNodePolicy(home, defaultNodePolicy(['fixture', 'coupled']));
  }
  const prefix = options.prefix ?? [];
  const argv = [...prefix, process.execPath, SCRIPT];
  const command = argv[0] as string;
  const args = argv.slice(1);
  const child = spawn(command, args, {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', FIXTURE_HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Under another program the controller is a grandchild: its own process group lets `stop`
    // signal both.
    detached: prefix.length > 0,
  });
  const terminate = () => {
    if (prefix.length > 0 && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
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
