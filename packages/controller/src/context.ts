/**
 * The real `NodeContext` (core `interfaces/node-context.ts`) a domain's node half runs against:
 * the system clock, a process runner that never uses a shell and hands every child an explicit,
 * minimal environment, the env-file chain loaded afresh, and — for an install — the node policy's
 * coupled actions of the domain (contract §5.1).
 *
 * The environment rule is here, in the one runner every domain gets, so no domain can forget it:
 * a child gets PATH, HOME, LANG and LC_* (when set), and `XDG_RUNTIME_DIR` /
 * `DBUS_SESSION_BUS_ADDRESS` when the controller has them (so `systemctl --user` reaches the
 * user's manager) — never the controller's other variables. What a domain adds (`env`,
 * `extraEnv`) is filtered on a node: no `FLEET_*` variable, no value holding a secret of the
 * env-file chain.
 */
import {
  loadEnvChain,
  policyActionRunner,
  type Clock,
  type ControllerSupervisor,
  type NodeContext,
  type NodeSupervisor,
  type Platform,
  type PolicyActionsOptions,
  type ProcessRequest,
  type ProcessResult,
  type ProcessRunner,
  type Registry,
  type SafeFileReader,
  type SecretValues,
} from '@fleet/core/node';

export const systemClock: Clock = {
  now: () => new Date(),
  monotonicMs: () => performance.now(),
};

export function currentPlatform(): Platform {
  return process.platform === 'darwin' || process.platform === 'win32' ? process.platform : 'linux';
}

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
    // execa (over a hundred modules) loaded when a process first runs: a controller that only
    // answers reads never loads it (contract §14: controller RSS).
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

export interface NodeContextOptions {
  readonly home: string;
  readonly nodeId: string;
  readonly platform?: Platform;
  readonly clock?: Clock;
  /** Runs before every process the context starts (the controller's `install.during_action`). */
  readonly beforeProcess?: () => Promise<void>;
  /** Safe reads of the domain's own files (probers read live files through it). */
  readonly files?: SafeFileReader;
  /** The node policy's actions of the domain being installed (`ctx.actions`). */
  readonly actions?: PolicyActionsOptions;
  /**
   * The registry whose bootstrap adapters drive this node's recorded supervisor: given, the
   * context offers `controllerSupervisor` (a domain's coupled restart of the controller).
   */
  readonly registry?: Registry;
  /** The node policy's `supervisor` (checked against the adapter's record before it is driven). */
  readonly policySupervisor?: NodeSupervisor;
  /** The env chain (the controller's, read again only on change); else read on every call. */
  readonly secrets?: () => Promise<SecretValues>;
}

export function createNodeContext(options: NodeContextOptions): NodeContext {
  const { home, registry } = options;
  const secrets = options.secrets ?? ((): Promise<SecretValues> => loadEnvChain(home));
  const processes = new ExecaProcessRunner(home, {
    ...(options.beforeProcess ? { beforeRun: options.beforeProcess } : {}),
    secrets,
  });
  const ctx: NodeContext = {
    home,
    nodeId: options.nodeId,
    platform: options.platform ?? currentPlatform(),
    clock: options.clock ?? systemClock,
    processes,
    secrets,
    ...(options.files ? { files: options.files } : {}),
    ...(options.actions
      ? { actions: policyActionRunner(processes, secrets, { home, ...options.actions }) }
      : {}),
    ...(registry
      ? {
          controllerSupervisor: async (): Promise<ControllerSupervisor | null> => {
            const { recordedControllerSupervisor } = await import('./lifecycle/supervisor.js');
            return recordedControllerSupervisor(registry, ctx, options.policySupervisor);
          },
        }
      : {}),
  };
  return ctx;
}
