/**
 * `createController`: starts a node agent on one home — the CLI's `fleet controller serve`, the
 * lab and the tests all start it this way. Start-up runs recovery (torn audit line, interrupted
 * operations, stale temp files) before the first request is accepted.
 */
import { readFile, realpath, unlink } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import {
  FLEET_PROTOCOL_VERSION,
  FleetError,
  NODE_POLICY_PATH,
  PROTOCOL_HEADER,
  createEnvChainLoader,
  loadEnvChain,
  shortSecretNames,
  type Clock,
  type Registry,
  type SecretValues,
} from '@fleet/core/node';
import type { Allowlist } from './allowlist.js';
import { AuditLog } from './audit/log.js';
import { systemClock } from './context.js';
import { allBackupPaths } from './backups.js';
import { createExclusive, ensurePrivateDir } from './fs/durable.js';
import { errnoOf } from './fs/errors.js';
import { ConnectionBudget } from './http/budget.js';
import { createPipeline } from './http/pipeline.js';
import { PathLocks } from './locks.js';
import { processAlive } from './process-alive.js';
import { OperationStore } from './operations.js';
import { recoverAtStart } from './recovery.js';
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
import { statePaths, type StatePaths } from './state-paths.js';
import { NodePolicyStore } from './policy/store.js';
import { drivenSupervisor } from './lifecycle/supervisor.js';
import { TokenStore } from './tokens/store.js';

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

/** Homes served by a controller of this process (the pid file cannot tell them apart). */
const servedHere = new Set<string>();

/** One controller per home: a pid file, taken over when its process is gone. */
async function claimHome(state: StatePaths): Promise<() => Promise<void>> {
  if (servedHere.has(state.root)) {
    throw new FleetError('LOCKED', `another controller in this process serves ${state.home}`);
  }
  servedHere.add(state.root);
  const release = async () => {
    await unlink(state.pidFile).catch(() => undefined);
    servedHere.delete(state.root);
  };
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await createExclusive(state.pidFile, `${process.pid}\n`);
        return release;
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
      }
      const pid = Number((await readFile(state.pidFile, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new FleetError('LOCKED', `another controller (pid ${pid}) serves this home`);
      }
      await unlink(state.pidFile).catch(() => undefined);
    }
    throw new FleetError('LOCKED', 'could not claim the controller pid file');
  } catch (error) {
    servedHere.delete(state.root);
    throw error;
  }
}

function isLoopback(bind: string): boolean {
  return bind === 'localhost' || bind === '::1' || bind.startsWith('127.');
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/**
 * Plain HTTP carries the bearer token in clear: off loopback it is refused, with the fix named
 * (contract §5: `--tls-cert F --tls-key F`).
 */
export function checkBind(bind: string, tls: boolean): void {
  if (isLoopback(bind) || tls) return;
  throw new FleetError(
    'USAGE',
    `--bind ${bind} would serve plain HTTP beyond this machine, with bearer tokens in clear: refused`,
    {
      suggestions: [
        'serve https: add --tls-cert cert.pem --tls-key key.pem (and pin its fingerprint as tls.fingerprint in fleet.yaml)',
        'or bind 127.0.0.1 and reach it through an SSH tunnel',
      ],
    },
  );
}

/**
 * The `Host` values a request may carry (DNS rebinding, catalogue 5): the bound address — or,
 * for a wildcard bind, every address of this machine's interfaces — and its host name, each with
 * the port, plus what `--allowed-host` adds. Never "anything": a wildcard bind still names its
 * machine.
 */
export function hostsFor(
  bind: string,
  port: number,
  extra: readonly string[],
  machine: { readonly hostname: string; readonly addresses: readonly string[] } = {
    hostname: hostname(),
    addresses: Object.values(networkInterfaces()).flatMap((list) =>
      (list ?? []).map((item) => item.address),
    ),
  },
): ReadonlySet<string> {
  const names = new Set(extra.map((host) => host.toLowerCase()));
  const add = (address: string) =>
    names.add(`${address.includes(':') ? `[${address}]` : address}:${port}`.toLowerCase());
  if (WILDCARDS.has(bind)) for (const address of machine.addresses) add(address);
  else add(bind);
  if (!isLoopback(bind)) {
    add(machine.hostname);
    if (!machine.hostname.includes('.')) add(`${machine.hostname}.local`);
  }
  if (isLoopback(bind) || WILDCARDS.has(bind)) {
    for (const name of ['127.0.0.1', 'localhost', '::1']) add(name);
  }
  return names;
}

const OVERLOADED = JSON.stringify({
  error: { code: 'OVERLOADED', message: 'too many connections; try again shortly' },
});

function rawAnswer(socket: Socket, status: string, body: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${PROTOCOL_HEADER}: ${FLEET_PROTOCOL_VERSION}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export async function createController(options: ControllerOptions): Promise<Controller> {
  let home: string;
  try {
    home = await realpath(options.home);
  } catch (error) {
    throw new FleetError('USAGE', `--home ${options.home}: ${errnoOf(error) ?? 'not found'}`);
  }
  if (
    options.legacyTokenSha256 !== undefined &&
    !/^[0-9a-f]{64}$/i.test(options.legacyTokenSha256)
  ) {
    throw new FleetError('USAGE', "the legacy token's sha256 must be 64 hex digits");
  }
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
    audit = await AuditLog.open(state.root, {
      clock,
      segmentBytes: limits.auditSegmentBytes,
      keepSegments: limits.auditKeepSegments,
      maxSegments: limits.auditMaxSegments,
      readFlushMs: limits.auditReadFlushMs,
      refusalIntervalMs: limits.auditRefusalIntervalMs,
    });
    await openStateDirs(audit, home, state, operations);
    const secretMemory = await SecretMemory.open(state, limits.maxFileBytes);
    const openedAudit = audit;
    // The node decides (contract §5.1): no valid policy, no controller (policy/store.ts).
    const policy = await NodePolicyStore.open({
      home,
      registry: options.registry,
      onMigrated: async (detail) => {
        process.stderr.write(`controller: ${detail}\n`);
        await openedAudit.append({
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
    const view = policy.latest();
    // The policy's supervisor and the adapter's record agree, or no controller (contract §12).
    await drivenSupervisor(home, view.policy.supervisor);
    const { allowlist } = view;
    const recoveryInput = {
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
    const build: BuildIdentity = options.build ?? (await buildIdentityOf());
    const runtime: ControllerRuntime = {
      home,
      nodeId: options.nodeId,
      registry: options.registry,
      state,
      clock,
      limits,
      allowlist,
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
    const controller = await listen(runtime, options, release);
    // A node-id change this controller's start completes (contract §10.2): settled once it serves.
    if (recovery.awaitingStart && recovery.awaitingStart.length > 0) {
      await settleAfterStart(recoveryInput, recovery.awaitingStart);
    }
    return controller;
  } catch (error) {
    await audit?.close().catch(() => undefined);
    await release();
    throw error;
  }
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

/**
 * The secret memory re-read at start against every file that can hold a resolved value (every
 * managed file, every backup, every recorded holder): values written before the memory existed are
 * found, values no file holds any more are forgotten (docs/secrets.md).
 */
async function reconcileSecretMemory(
  home: string,
  state: StatePaths,
  allowlist: Allowlist,
  memory: SecretMemory,
  chain: SecretValues | undefined,
): Promise<void> {
  const paths = [
    ...allowlist.all().map((entry) => entry.path),
    ...(await allBackupPaths(home, state.backups)),
    ...memory.holders(),
  ];
  await memory.reconcile(paths, chain ?? new Map());
}

/**
 * A value under the 8-character floor is not an error until a file uses it (the chain may serve
 * other tools): an install that needs it is refused (`SECRET_TOO_SHORT`). Said once at start, by
 * name, since such a value is never redacted (docs/secrets.md).
 */
function warnShortSecrets(chain: SecretValues | undefined): void {
  const short = chain === undefined ? [] : shortSecretNames(chain);
  if (short.length === 0) return;
  process.stderr.write(
    `controller: the env-file chain holds ${short.join(', ')}, shorter than 8 characters: never redacted, and an install that uses ${short.length > 1 ? 'them' : 'it'} is refused (SECRET_TOO_SHORT)\n`,
  );
}

async function listen(
  runtime: ControllerRuntime,
  options: ControllerOptions,
  release: () => Promise<void>,
): Promise<Controller> {
  const { limits } = runtime;
  const bind = options.bind ?? '127.0.0.1';
  const serverOptions = {
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 2)),
  };
  let allowedHosts: ReadonlySet<string> = new Set();
  // Unauthenticated connections cannot use up the authenticated budget (http/budget.ts).
  const budget = new ConnectionBudget<Socket>({
    authenticated: limits.maxConnections,
    unauthenticated: limits.maxUnauthenticatedConnections,
    perAddress: limits.unauthenticatedPerAddress,
  });
  const pipeline = createPipeline(runtime, {
    get allowedHosts() {
      return allowedHosts;
    },
    validateResponses: options.validateResponses ?? false,
    admitAuthenticated: (req) => budget.authenticate(req.socket),
  });
  const handler = (req: Parameters<typeof pipeline>[0], res: Parameters<typeof pipeline>[1]) => {
    budget.busy(req.socket, true);
    res.once('close', () => budget.busy(req.socket, false));
    void pipeline(req, res);
  };
  const server: Server = options.tls
    ? createHttpsServer(
        {
          ...serverOptions,
          // A TLS handshake is pre-authentication time too: bounded like the headers.
          handshakeTimeout: serverOptions.headersTimeout,
          cert: options.tls.cert,
          key: options.tls.key,
        },
        handler,
      )
    : createHttpServer(serverOptions, handler);

  // Over TLS the request's socket is the TLS socket: budgeted from the handshake's end.
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    const admission = budget.open(socket, socket.remoteAddress ?? 'unknown');
    if (!admission.admitted) {
      if (options.tls) socket.destroy();
      else rawAnswer(socket, '503 Service Unavailable', OVERLOADED);
      return;
    }
    admission.evict?.destroy();
    socket.once('close', () => budget.close(socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && (!pending || !pending.headersSent)) {
      const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      const code = timeout
        ? 'REQUEST_TIMEOUT'
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? 'REQUEST_TOO_LARGE'
          : 'BAD_REQUEST';
      const status = timeout
        ? '408 Request Timeout'
        : code === 'REQUEST_TOO_LARGE'
          ? '413 Payload Too Large'
          : '400 Bad Request';
      const message = timeout ? 'the request took too long' : 'malformed HTTP request';
      rawAnswer(socket, status, JSON.stringify({ error: { code, message } }));
      // No operation id, no client: counted per address and interval (audit/refusals.ts).
      runtime.audit.countRefusal({
        client: null,
        remote: socket.remoteAddress ?? 'unknown',
        operation: 'unknown',
        outcome: 'failed',
        code,
        status: Number(status.slice(0, 3)),
      });
    }
    socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, bind, () => {
      server.off('error', reject);
      resolve();
    });
  });
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
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      });
      await runtime.audit.close();
      await release();
    },
  };
}
