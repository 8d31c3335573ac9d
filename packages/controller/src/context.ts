/**
 * The real `NodeContext` (core `interfaces/node-context.ts`) a domain's node half runs against:
 * the system clock, a process runner that never uses a shell and hands the child an explicit,
 * minimal environment (no inherited tokens or secrets), and the env-file chain loaded afresh.
 */
import { execa } from 'execa';
import {
  loadEnvChain,
  type Clock,
  type ControllerSupervisor,
  type NodeContext,
  type Platform,
  type ProcessRequest,
  type ProcessResult,
  type ProcessRunner,
  type Registry,
  type SafeFileReader,
  type SecretValues,
} from '@fleet/core';

export const systemClock: Clock = {
  now: () => new Date(),
  monotonicMs: () => performance.now(),
};

export function currentPlatform(): Platform {
  return process.platform === 'darwin' || process.platform === 'win32' ? process.platform : 'linux';
}

/** The environment a child gets when the request names none: enough to run, nothing secret. */
export function minimalEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
  };
  if (process.platform === 'win32') {
    for (const key of ['SystemRoot', 'ComSpec', 'PATHEXT', 'TEMP', 'TMP']) {
      const value = process.env[key];
      if (value !== undefined) env[key] = value;
    }
  }
  return env;
}

export class ExecaProcessRunner implements ProcessRunner {
  constructor(
    private readonly home: string,
    private readonly beforeRun: () => Promise<void> = () => Promise.resolve(),
  ) {}

  async run(request: ProcessRequest): Promise<ProcessResult> {
    await this.beforeRun();
    const result = await execa(request.command, [...request.args], {
      shell: false,
      extendEnv: false,
      env: request.env ? { ...request.env } : { ...minimalEnv(this.home), ...request.extraEnv },
      cwd: request.cwd ?? this.home,
      ...(request.input === undefined ? { stdin: 'ignore' as const } : { input: request.input }),
      ...(request.timeoutMs === undefined ? {} : { timeout: request.timeoutMs }),
      reject: false,
      stripFinalNewline: false,
      windowsHide: true,
    });
    return {
      exitCode: typeof result.exitCode === 'number' ? result.exitCode : -1,
      stdout: String(result.stdout ?? ''),
      stderr: String(result.stderr ?? ''),
      timedOut: result.timedOut === true,
    };
  }
}

export interface NodeContextOptions {
  readonly home: string;
  readonly nodeId: string;
  readonly platform?: Platform;
  readonly clock?: Clock;
  /** Runs before every process the context starts (the controller's `install.during_action`). */
  readonly beforeProcess?: () => Promise<void>;
  /** Safe reads of the domain's own files (probers read live files through it). */
  readonly files?: SafeFileReader;
  /**
   * The registry whose bootstrap adapters drive this node's recorded supervisor: given, the
   * context offers `controllerSupervisor` (a domain's coupled restart of the controller).
   */
  readonly registry?: Registry;
}

export function createNodeContext(options: NodeContextOptions): NodeContext {
  const { home, registry } = options;
  const ctx: NodeContext = {
    home,
    nodeId: options.nodeId,
    platform: options.platform ?? currentPlatform(),
    clock: options.clock ?? systemClock,
    processes: new ExecaProcessRunner(home, options.beforeProcess),
    secrets: (): Promise<SecretValues> => loadEnvChain(home),
    ...(options.files ? { files: options.files } : {}),
    ...(registry
      ? {
          controllerSupervisor: async (): Promise<ControllerSupervisor | null> => {
            const { recordedControllerSupervisor } = await import('./lifecycle/supervisor.js');
            return recordedControllerSupervisor(registry, ctx);
          },
        }
      : {}),
  };
  return ctx;
}
