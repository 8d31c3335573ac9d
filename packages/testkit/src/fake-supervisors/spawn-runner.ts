import { spawn } from 'node:child_process';
import type { ProcessRequest, ProcessResult, ProcessRunner } from '@fleet/core';

/**
 * A process runner that really runs commands — never through a shell — with a base environment
 * the test chooses (e.g. the fake supervisors first on `PATH`). A request's `env` replaces the base
 * environment; its `extraEnv` is added to it. Every request is recorded in `calls`.
 */
export class SpawnProcessRunner implements ProcessRunner {
  readonly calls: ProcessRequest[] = [];

  constructor(
    readonly baseEnv: Readonly<Record<string, string>>,
    private readonly cwd: string,
  ) {}

  run(request: ProcessRequest): Promise<ProcessResult> {
    this.calls.push(request);
    return new Promise((resolve) => {
      const child = spawn(request.command, [...request.args], {
        shell: false,
        cwd: request.cwd ?? this.cwd,
        env: request.env ? { ...request.env } : { ...this.baseEnv, ...request.extraEnv },
        stdio: [request.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      const timer =
        request.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              timedOut = true;
              child.kill('SIGKILL');
            }, request.timeoutMs);
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      if (request.input !== undefined) child.stdin?.end(request.input);
      child.once('error', (error) => {
        clearTimeout(timer);
        resolve({ exitCode: -1, stdout, stderr: `${stderr}${error.message}\n`, timedOut });
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ exitCode: typeof code === 'number' ? code : -1, stdout, stderr, timedOut });
      });
    });
  }
}
