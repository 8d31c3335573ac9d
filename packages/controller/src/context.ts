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
import { recordedControllerSupervisor } from './lifecycle/supervisor.js';
import { ExecaProcessRunner } from './process-runner.js';
import {
  loadEnvChain,
  policyActionRunner,
  type Clock,
  type ControllerSupervisor,
  type NodeContext,
  type NodeSupervisor,
  type Platform,
  type PolicyActionsOptions,
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

export {
  ExecaProcessRunner,
  PASSED_THROUGH,
  minimalEnv,
  withoutSecrets,
  type ProcessRunnerOptions,
} from './process-runner.js';

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
            return recordedControllerSupervisor(registry, ctx, options.policySupervisor);
          },
        }
      : {}),
  };
  return ctx;
}
