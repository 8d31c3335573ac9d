/**
 * `createController`: starts a node agent on one home — the CLI's `fleet controller serve`, the
 * lab and the tests all start it this way. Start-up runs recovery (torn audit line, interrupted
 * operations, stale temp files) before the first request is accepted. The pid-file claim on the
 * home (home-claim.ts) and the start's pass over the secrets (secrets-at-start.ts) live beside it.
 */
import { readFile, realpath } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import {
  FleetError,
  NODE_POLICY_PATH,
  createEnvChainLoader,
  loadEnvChain,
  type Clock,
  type Registry,
} from '@fleet/core/node';
import { AuditLog } from './audit/log.js';
import { systemClock } from './context.js';
import { ensurePrivateDir } from './fs/durable.js';
import { errnoOf } from './fs/errors.js';
import { createPipeline } from './http/pipeline.js';
import {
  checkBind,
  closeServer,
  connectionBudget,
  createNodeServer,
  hostsFor,
  listenOn,
} from './http/server.js';
import { claimHome } from './home-claim.js';
import { PathLocks } from './locks.js';
import { OperationStore } from './operations.js';
import { recoverAtStart, type RecoveryInput, type RecoveryReport } from './recovery.js';
import { failpoint } from './failpoints.js';
import { checkIdentityCoupling } from './identity-coupling.js';
import { buildIdentityOf } from './build-identity.js';
import { loginPathCacheFor } from './versions/login-path.js';
import { settleAfterStart } from './settle-pending.js';
import {
  DEFAULT_LIMITS,
  type BuildIdentity,
  type ControllerRuntime,
  HealthAlarms,
  type Limits,
} from './runtime.js';
import { SecretMemory } from './secret-memory.js';
import { reconcileSecretMemory, warnShortSecrets } from './secrets-at-start.js';
import { statePaths, type StatePaths } from './state-paths.js';
import { NodePolicyStore } from './policy/store.js';
import { drivenSupervisor } from './lifecycle/supervisor.js';
import { TokenStore } from './tokens/store.js';

// Where the server answers is decided with its sockets (http/server.ts); named here as before.
export { checkBind, hostsFor };

export interface ControllerOptions {
  /** The node's home (`~`): every managed path and the node state are under it. */
  readonly home: string;
  readonly nodeId: string;
  readonly registry: Registry;
  /** Address to listen on (default `127.0.0.1`). */
  readonly bind?: string;
  /** Port (default 0: an ephemeral port; read the bound one from `url`). */
  readonly port?: number;
  /** PEM certificate and key: serve https instead of http. */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  readonly limits?: Partial<Limits>;
  readonly clock?: Clock;
  /**
   * The runtime's build identity (default: the generation the running script sits in, else a
   * development build `{ sha256: null, commit: null }`; see build-identity.ts).
   */
  readonly build?: BuildIdentity;
  /** sha256 (hex) of the legacy shared token, accepted for read operations only. */
  readonly legacyTokenSha256?: string;
  /**
   * Extra `Host` header values to accept (`node-01.lan:7701`): the name clients use when it is
   * neither this machine's host name nor one of its addresses (controller README, "Binding
   * beyond loopback").
   */
  readonly allowedHosts?: readonly string[];
  /** Validate every answer against its schema (tests). */
  readonly validateResponses?: boolean;
}

export interface Controller {
  /** `http://127.0.0.1:PORT` (or https). */
  readonly url: string;
  readonly port: number;
  readonly runtime: ControllerRuntime;
  close(): Promise<void>;
}

async function packageInfo(): Promise<{ name: string; version: string }> {
  const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
  const { name, version } = JSON.parse(text) as { name: string; version: string };
  return { name, version };
}

/** What the steps of a start share, once the home is claimed and the audit log open. */
interface StartContext {
  readonly options: ControllerOptions;
  readonly home: string;
  readonly state: StatePaths;
  readonly clock: Clock;
  readonly limits: Limits;
  readonly audit: AuditLog;
  readonly operations: OperationStore;
}

export async function createController(options: ControllerOptions): Promise<Controller> {
  const home = await realHome(options.home);
  checkLegacyToken(options.legacyTokenSha256);
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  checkBind(options.bind ?? '127.0.0.1', options.tls !== undefined);
  const clock = options.clock ?? systemClock;
  const state = statePaths(home);
  // Every state directory is walked from the home without following a link (contract §15): the
  // state root first (the audit log lives there; a planted root is refused before anything is
  // written), then the others, whose refusal is audited.
  await ensurePrivateDir(home, state.root);
  const operations = new OperationStore(state);
  const release = await claimHome(state);
  let audit: AuditLog | undefined;
  try {
    audit = await openAudit(state, clock, limits);
    return await startNode({ options, home, state, clock, limits, audit, operations }, release);
  } catch (error) {
    await audit?.close().catch(() => undefined);
    await release();
    throw error;
  }
}

async function realHome(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    throw new FleetError('USAGE', `--home ${path}: ${errnoOf(error) ?? 'not found'}`);
  }
}

function checkLegacyToken(sha256: string | undefined): void {
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(sha256)) {
    throw new FleetError('USAGE', "the legacy token's sha256 must be 64 hex digits");
  }
}

function openAudit(state: StatePaths, clock: Clock, limits: Limits): Promise<AuditLog> {
  return AuditLog.open(state.root, {
    clock,
    segmentBytes: limits.auditSegmentBytes,
    keepSegments: limits.auditKeepSegments,
    maxSegments: limits.auditMaxSegments,
    readFlushMs: limits.auditReadFlushMs,
    refusalIntervalMs: limits.auditRefusalIntervalMs,
  });
}

/**
 * The start after the audit log is open, in order: the state directories, the secret memory, the
 * node policy and its supervisor, recovery, the secrets, the identity coupling, then serving.
 */
async function startNode(start: StartContext, release: () => Promise<void>): Promise<Controller> {
  const { options, home, state, clock, limits, audit, operations } = start;
  await openStateDirs(audit, home, state, operations);
  const secretMemory = await SecretMemory.open(state, limits.maxFileBytes);
  const policy = await openPolicy(home, options.registry, audit);
  const view = policy.latest();
  // The policy's supervisor and the adapter's record agree, or no controller (contract §12).
  await drivenSupervisor(home, view.policy.supervisor);
  const { allowlist } = view;
  const recoveryInput: RecoveryInput = {
    home,
    state,
    audit,
    operations,
    allowlist,
    maxFileBytes: limits.maxFileBytes,
    now: () => clock.now(),
    nodeId: options.nodeId,
  };
  const recovery = await recoverAtStart(recoveryInput);
  const chain = await loadEnvChain(home).catch(() => undefined);
  await reconcileSecretMemory(home, state, allowlist, secretMemory, chain);
  warnShortSecrets(chain);
  // Fail closed (contract §10.2): never serve as a node the identity file does not name.
  await checkIdentityCoupling({
    home,
    nodeId: options.nodeId,
    registry: options.registry,
    maxFileBytes: limits.maxFileBytes,
  });
  await failpoint('controller.start', options.nodeId);
  await operations.prune(new Date(clock.now().getTime() - limits.operationRetentionMs));
  const runtime = await assembleRuntime(start, { policy, view, secretMemory, recovery });
  const controller = await listen(runtime, options, release);
  // A node-id change this controller's start completes (contract §10.2): settled once it serves.
  if (recovery.awaitingStart && recovery.awaitingStart.length > 0) {
    await settleAfterStart(recoveryInput, recovery.awaitingStart);
  }
  return controller;
}

/** The node decides (contract §5.1): no valid policy, no controller (policy/store.ts). */
function openPolicy(home: string, registry: Registry, audit: AuditLog): Promise<NodePolicyStore> {
  return NodePolicyStore.open({
    home,
    registry,
    onMigrated: async (detail) => {
      process.stderr.write(`controller: ${detail}\n`);
      await audit.append({
        operationId: null,
        client: null,
        operation: 'node-policy',
        paths: ['~/.local/state/fleet/bootstrap-policy.json', NODE_POLICY_PATH],
        files: [],
        outcome: 'ok',
        code: null,
        detail,
      });
    },
  });
}

/** What the start opened, beyond the start context, that the runtime holds. */
interface StartedParts {
  readonly policy: NodePolicyStore;
  readonly view: ControllerRuntime['view'];
  readonly secretMemory: SecretMemory;
  readonly recovery: RecoveryReport;
}

async function assembleRuntime(
  start: StartContext,
  { policy, view, secretMemory, recovery }: StartedParts,
): Promise<ControllerRuntime> {
  const { options, home, state, clock, limits, audit, operations } = start;
  const build: BuildIdentity = options.build ?? (await buildIdentityOf());
  return {
    home,
    nodeId: options.nodeId,
    registry: options.registry,
    state,
    clock,
    limits,
    allowlist: view.allowlist,
    policy,
    view,
    tokens: new TokenStore(state, clock),
    legacy: options.legacyTokenSha256
      ? Buffer.from(options.legacyTokenSha256.toLowerCase(), 'hex')
      : null,
    audit,
    operations,
    locks: new PathLocks(),
    // A runtime run from a generation is the artifact it was staged from (`@fleet/cli` and
    // its version); a development build is this package.
    package: build.package ?? (await packageInfo()),
    build: { sha256: build.sha256, commit: build.commit },
    startedAt: clock.now().toISOString(),
    recovery,
    alarms: new HealthAlarms(),
    // Read again only when a file of the chain changed (a stat per file per request).
    secrets: createEnvChainLoader(home),
    secretMemory,
    // Learned on the first `fleet version` read, never at start (docs/version.md).
    loginPath: loginPathCacheFor(home, clock),
  };
}

/** The state directories besides the root; a planted link is refused, audited, and stops the start. */
async function openStateDirs(
  audit: AuditLog,
  home: string,
  state: StatePaths,
  operations: OperationStore,
): Promise<void> {
  try {
    await ensurePrivateDir(home, state.backups);
    await operations.init();
  } catch (error) {
    await audit
      .append({
        operationId: null,
        client: null,
        operation: 'start',
        paths: [],
        files: [],
        outcome: 'failed',
        code: (error as FleetError).code ?? 'IO_ERROR',
        detail: `the controller did not start: ${(error as Error).message}`,
      })
      .catch(() => undefined);
    throw error;
  }
}

async function listen(
  runtime: ControllerRuntime,
  options: ControllerOptions,
  release: () => Promise<void>,
): Promise<Controller> {
  const bind = options.bind ?? '127.0.0.1';
  let allowedHosts: ReadonlySet<string> = new Set();
  const budget = connectionBudget(runtime.limits);
  const pipeline = createPipeline(runtime, {
    get allowedHosts() {
      return allowedHosts;
    },
    validateResponses: options.validateResponses ?? false,
    admitAuthenticated: (req) => budget.authenticate(req.socket),
  });
  const server = createNodeServer(runtime.limits, options.tls, budget, pipeline, runtime.audit);
  await listenOn(server, options.port ?? 0, bind);
  const port = (server.address() as AddressInfo).port;
  allowedHosts = hostsFor(bind, port, options.allowedHosts ?? []);
  const shown = bind.includes(':') ? `[${bind}]` : bind;
  let closed = false;
  return {
    url: `${options.tls ? 'https' : 'http'}://${shown}:${port}`,
    port,
    runtime,
    async close() {
      if (closed) return;
      closed = true;
      await closeServer(server);
      await runtime.audit.close();
      await release();
    },
  };
}
