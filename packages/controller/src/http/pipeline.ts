/**
 * One request, start to end: Host and Origin checks, the default-deny route table, the declared
 * body size, authentication (before any body is read), scopes, the bounded and strictly decoded
 * body, the handler, and the answer — validated against the route's response schema when asked
 * (tests do). Every refusal and failure is one stable code, one HTTP status and one audit record;
 * error text is redacted like anything else leaving the node.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AUDIT_HEAD_HEADER,
  FLEET_PROTOCOL_VERSION,
  FleetError,
  PROTOCOL_HEADER,
  describeProtocol,
  errorBodySchema,
  matchRoute,
  protocolOfHeader,
  type RouteMatch,
  type RouteSpec,
  type Redactor,
} from '@fleet/core/node';
import { audit } from '../handlers/audit.js';
import { exportFile, capture, inventory } from '../handlers/files.js';
import { health, identity } from '../handlers/identity.js';
import { install } from '../handlers/install.js';
import { probe } from '../handlers/probe.js';
import { snapshot } from '../handlers/snapshot.js';
import { operationStatus } from '../handlers/status.js';
import {
  runtimeActivate,
  runtimeRollback,
  runtimeStage,
  runtimeStatus,
} from '../handlers/runtime.js';
import { versions } from '../handlers/versions.js';
import { summary } from '../handlers/summary.js';
import {
  tokenIssue,
  tokenLineage,
  tokenList,
  tokenRevoke,
  tokenRotate,
} from '../handlers/tokens.js';
import type { Handler } from '../handlers/types.js';
import { auditAnswer, auditFailure } from './request-audit.js';
import { redactorOf, type ControllerRuntime } from '../runtime.js';
import { authenticate, authorize, type Principal } from '../tokens/auth.js';
import { checkDeclaredLength, decodeJson, hasBody, hostAllowed, readBody } from './request.js';
import { WireRefusal, errorBody, sendJson, toWireError, type WireError } from './respond.js';

const HANDLERS: Record<RouteSpec['operation'], Handler> = {
  identity,
  health,
  inventory,
  export: exportFile,
  install,
  capture,
  probe,
  snapshot,
  'operation-status': operationStatus,
  audit,
  versions,
  'runtime-stage': runtimeStage,
  'runtime-activate': runtimeActivate,
  'runtime-status': runtimeStatus,
  'runtime-rollback': runtimeRollback,
  summary,
  'token-list': tokenList,
  'token-lineage': tokenLineage,
  'token-issue': tokenIssue,
  'token-rotate': tokenRotate,
  'token-revoke': tokenRevoke,
};

export interface PipelineOptions {
  readonly allowedHosts: ReadonlySet<string> | 'any';
  /** Validate every answer against its schema (tests); a mismatch becomes a 500. */
  readonly validateResponses: boolean;
  /**
   * Moves the request's connection from the unauthenticated budget into the authenticated one
   * (http/budget.ts); `false` when that budget is full (then the answer is 503 `OVERLOADED`).
   */
  readonly admitAuthenticated?: (req: IncomingMessage) => boolean;
}

/**
 * A client of another wire protocol is refused on every route but the ones any version may call
 * (identity, health, runtime): nothing it sent is acted on. The message names both versions.
 */
function checkProtocol(route: RouteSpec, header: string | string[] | undefined): void {
  if (route.anyProtocol === true || protocolOfHeader(header) === FLEET_PROTOCOL_VERSION) return;
  const client = protocolOfHeader(header);
  throw new FleetError(
    'PROTOCOL_MISMATCH',
    `this node speaks fleet protocol ${FLEET_PROTOCOL_VERSION}; the client speaks ${describeProtocol(header)}: ${
      client !== null && client > FLEET_PROTOCOL_VERSION
        ? 'upgrade the node (fleet upgrade HOST --confirm)'
        : `use a fleet CLI that speaks protocol ${FLEET_PROTOCOL_VERSION}`
    }; nothing was done`,
  );
}

/**
 * The authenticated budget is full (http/budget.ts): `OVERLOADED`, and the connection is closed so
 * it does not go on holding its slot in the unauthenticated one.
 */
function overloaded(): WireRefusal {
  return new WireRefusal('OVERLOADED', 'too many authenticated connections; try again shortly', {
    close: true,
  });
}

/**
 * How far a request got: what its failure is audited with (auditFailure) and answered by. Each
 * step fills in what it learned as soon as it learned it.
 */
interface RequestProgress {
  route: RouteSpec | null;
  principal: Principal | undefined;
  operationId: string | null;
  body: unknown;
  reachedHandler: boolean;
}

/** A request past every check before its body: its route, and who sent it. */
interface Admitted {
  readonly route: RouteSpec;
  readonly params: Extract<RouteMatch, { route: RouteSpec }>['params'];
  readonly principal: Principal;
  readonly maxBodyBytes: number;
}

export function createPipeline(
  shared: ControllerRuntime,
  options: PipelineOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // One version of the node policy for the whole request (policy/store.ts).
    const view = await shared.policy.current();
    const runtime: ControllerRuntime = { ...shared, view, allowlist: view.allowlist };
    const progress: RequestProgress = {
      route: null,
      principal: undefined,
      operationId: null,
      body: undefined,
      reachedHandler: false,
    };
    try {
      const { route, params, principal, maxBodyBytes } = await admit(
        runtime,
        options,
        req,
        progress,
      );
      if (route.request !== null) await readRequestBody(req, route.request, maxBodyBytes, progress);
      progress.reachedHandler = true;
      const { operationId, body } = progress;
      const result = await HANDLERS[route.operation]({ runtime, principal, route, params, body });
      const schema = result.status === 200 ? route.response : errorBodySchema;
      if (options.validateResponses && !schema.safeParse(result.body).success) {
        throw new FleetError('INTERNAL', `the ${route.operation} answer does not match its schema`);
      }
      noteDurability(runtime, codeIn(result.body));
      if (!result.audited) await auditAnswer(runtime, route, principal, operationId, body, result);
      if (result.afterResponse) afterAnswer(res, result.afterResponse);
      setAuditHead(res, runtime);
      sendJson(res, result.status, result.body);
    } catch (error) {
      await answerFailure(runtime, req, res, progress, error);
    }
  };
}

/**
 * Everything checked before a byte of the body is read, in order: Host and Origin, the route,
 * the declared length, the token, the authenticated budget, the scope, the protocol.
 */
async function admit(
  runtime: ControllerRuntime,
  options: PipelineOptions,
  req: IncomingMessage,
  progress: RequestProgress,
): Promise<Admitted> {
  if (!hostAllowed(req.headers.host, options.allowedHosts)) {
    throw new WireRefusal('ORIGIN_REJECTED', 'the Host header does not name this controller', {
      status: 421,
    });
  }
  if (req.headers.origin !== undefined) {
    throw new FleetError('ORIGIN_REJECTED', 'cross-origin requests are refused');
  }
  const match = matchRoute(req.method ?? '', req.url ?? '');
  if (match.route === null) throw new FleetError('OP_UNKNOWN', 'no such operation');
  const route = match.route;
  progress.route = route;
  if (route.request === null && hasBody(req)) {
    throw new FleetError('BAD_REQUEST', `${route.operation} takes no request body`);
  }
  const maxBodyBytes = route.maxBodyBytes ?? runtime.limits.maxBodyBytes;
  checkDeclaredLength(req, maxBodyBytes);
  const tokens = await runtime.tokens.current();
  const header = req.headers.authorization;
  const principal = authenticate(header, tokens, runtime.legacy, runtime.clock.now());
  progress.principal = principal;
  if (options.admitAuthenticated && !options.admitAuthenticated(req)) throw overloaded();
  authorize(principal, route);
  checkProtocol(route, req.headers[PROTOCOL_HEADER]);
  return { route, params: match.params, principal, maxBodyBytes };
}

/** The bounded, strictly decoded JSON body, checked against the route's schema. */
async function readRequestBody(
  req: IncomingMessage,
  schema: NonNullable<RouteSpec['request']>,
  maxBodyBytes: number,
  progress: RequestProgress,
): Promise<void> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new FleetError('BAD_REQUEST', 'the request body must be application/json');
  }
  progress.body = decodeJson(await readBody(req, maxBodyBytes), schema);
  const id = (progress.body as { operationId?: unknown }).operationId;
  if (typeof id === 'string') progress.operationId = id;
}

/** A refusal or failure: audited, redacted (or masked) and answered; closed when unauthenticated. */
async function answerFailure(
  runtime: ControllerRuntime,
  req: IncomingMessage,
  res: ServerResponse,
  progress: RequestProgress,
  error: unknown,
): Promise<void> {
  const wire = toWireError(error);
  noteDurability(runtime, wire.code);
  await auditFailure(runtime, req, progress, wire);
  const redactor = await redactorOf(runtime).catch(() => undefined);
  if (progress.principal !== undefined) setAuditHead(res, runtime);
  // A connection refused before it authenticated is closed: it frees its slot in the
  // unauthenticated budget (http/budget.ts) instead of idling in it.
  const close = wire.close === true || progress.principal === undefined;
  sendJson(res, wire.status, redactOrMask(wire, redactor), { close });
  if (close) res.once('finish', () => req.socket.destroySoon());
}

/**
 * Every authenticated answer carries the node's durable audit head (`<seq>:<sha256>`), for the
 * operator to keep (core client/audit-heads.ts). Never to an unauthenticated caller.
 */
function setAuditHead(res: ServerResponse, runtime: ControllerRuntime): void {
  const head = runtime.audit.head();
  if (head.seq > 0 && !res.headersSent)
    res.setHeader(AUDIT_HEAD_HEADER, `${head.seq}:${head.sha256}`);
}

/** The error code an answer carries (an error envelope, or a rolled-back receipt's `error`). */
function codeIn(body: unknown): string | undefined {
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Any failed fsync degrades health until a restart: the volume is suspect (catalogue 26). */
function noteDurability(runtime: ControllerRuntime, code: string | undefined): void {
  if (code !== 'DURABILITY_FAILED') return;
  const at = runtime.clock.now().toISOString();
  const detail = `an fsync failed at ${at} (DURABILITY_FAILED): the volume is suspect (catalogue 26)`;
  if (runtime.alarms.raise('volume', detail)) {
    runtime.audit.appendRead({
      operationId: null,
      client: null,
      operation: 'health.degraded',
      paths: [],
      files: [],
      outcome: 'failed',
      code: 'DURABILITY_FAILED',
      detail,
    });
  }
}

/** Runs `work` once, after the answer is flushed or the connection closed, whichever is first. */
function afterAnswer(res: ServerResponse, work: () => void | Promise<void>): void {
  let ran = false;
  const run = () => {
    if (ran) return;
    ran = true;
    Promise.resolve()
      .then(work)
      .catch((error: unknown) => {
        process.stderr.write(
          `controller: the action after the answer failed: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      });
  };
  res.once('finish', run);
  res.once('close', run);
}

/** Redacted error body; without the env chain, the message cannot be checked, so it is masked. */
function redactOrMask(wire: WireError, redactor: Redactor | undefined) {
  if (redactor) return errorBody(wire, redactor);
  return errorBody(
    { ...wire, message: `${wire.code} (details withheld: the env-file chain is unreadable)` },
    undefined,
  );
}
