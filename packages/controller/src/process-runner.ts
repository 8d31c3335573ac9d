/**
 * The process runner every domain's node half gets (`NodeContext.processes`; context.ts builds
 * the context around it): no shell, an explicit minimal environment, and what a domain adds
 * filtered on a node (the environment rule of context.ts's header, contract §5.1). Its own module
 * so that the lifecycle's launcher (lifecycle/launch.ts) runs processes the same way without
 * importing the context, which reaches the lifecycle's supervisor.
 */
import type { ProcessRequest, ProcessResult, ProcessRunner, SecretValues } from '@fleet/core/node';

/** The controller's variables a child gets as they are, when set: what a user service needs. */
export const PASSED_THROUGH = ['XDG_RUNTIME_DIR', 'DBUS_SESSION_BUS_ADDRESS'] as const;

/**
 * The environment a child gets when the request names none: enough to run and to reach the
 * user's service manager, nothing secret. `source` is the controller's own environment.
 */
export function minimalEnv(
  home: string,
  source: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: source['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: source['LANG'] || 'C.UTF-8',
  };
  for (const [key, value] of Object.entries(source)) {
    if (/^LC_[A-Z_]+$/.test(key) && value) env[key] = value;
  }
  for (const key of PASSED_THROUGH) {
    const value = source[key];
    if (value) env[key] = value;
  }
  if (process.platform === 'win32') {
    for (const key of ['SystemRoot', 'ComSpec', 'PATHEXT', 'TEMP', 'TMP']) {
      const value = source[key];
      if (value !== undefined) env[key] = value;
    }
  }
  return env;
}

/**
 * What a node's child may never receive, dropped from what a domain asks to add: fleet's own
 * variables (`FLEET_*`: tokens, sockets, failpoints) and any value holding a secret value of the
 * env-file chain.
 */
export function withoutSecrets(
  env: Readonly<Record<string, string>>,
  secrets: SecretValues,
): Record<string, string> {
  const values = [...secrets.values()].filter((value) => value !== '');
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (/^FLEET_/i.test(key)) continue;
    if (values.some((secret) => value.includes(secret))) continue;
    out[key] = value;
  }
  return out;
}

export interface ProcessRunnerOptions {
  /** Runs before every process (the controller's `install.during_action` failpoint). */
  readonly beforeRun?: () => Promise<void>;
  /**
   * On a node: the env-file chain, so what a domain adds to a child's environment is filtered
   * ({@link withoutSecrets}). Without it (the operator side), additions pass as they are.
   */
  readonly secrets?: () => Promise<SecretValues>;
}

export class ExecaProcessRunner implements ProcessRunner {
  private readonly options: ProcessRunnerOptions;

  constructor(
    private readonly home: string,
    options: ProcessRunnerOptions | (() => Promise<void>) = {},
  ) {
    this.options = typeof options === 'function' ? { beforeRun: options } : options;
  }

  private async envFor(request: ProcessRequest): Promise<Record<string, string>> {
    const added = request.env ?? request.extraEnv ?? {};
    const filtered = this.options.secrets
      ? withoutSecrets(added, await this.options.secrets())
      : { ...added };
    return request.env ? filtered : { ...minimalEnv(this.home), ...filtered };
  }

  async run(request: ProcessRequest): Promise<ProcessResult> {
    await this.options.beforeRun?.();
    // Lazy: execa only when a process runs (packages/controller/README.md, Lazy imports kept).
    const { execa } = await import('execa');
    const result = await execa(request.command, [...request.args], {
      shell: false,
      extendEnv: false,
      env: await this.envFor(request),
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
