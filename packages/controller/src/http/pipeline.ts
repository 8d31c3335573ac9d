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
  type AuditOutcome,
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
import type { AuditEntry } from '../audit/log.js';
import { redactorOf, type ControllerRuntime } from '../runtime.js';
import { authenticate, authorize, type Principal } from '../tokens/auth.js';
import { checkDeclaredLength, decodeJson, hasBody, hostAllowed, readBody } from './request.js';
import { errorBody, sendJson, toWireError, type WireError } from './respond.js';

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

const DENIALS = new Set([
  'AUTH_REQUIRED',
  'AUTH_INVALID',
  'AUTH_EXPIRED',
  'AUTH_REVOKED',
  'SCOPE_DENIED',
  'ORIGIN_REJECTED',
  'OP_UNKNOWN',
  'REPLAY_REJECTED',
  'RECOVERY_REQUIRED',
]);

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

function refuse(
  code: 'ORIGIN_REJECTED' | 'OP_UNKNOWN',
  message: string,
  status?: number,
): FleetError {
  const error = new FleetError(code, message);
  return status === undefined ? error : Object.assign(error, { status });
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

function overloaded(): FleetError {
  return Object.assign(
    new FleetError('OVERLOADED', 'too many authenticated connections; try again shortly'),
    { close: true },
  );
}

export function createPipeline(shared: ControllerRuntime, options: PipelineOptions) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // One version of the node policy for the whole request (policy/store.ts).
    const view = await shared.policy.current();
    const runtime: ControllerRuntime = { ...shared, view, allowlist: view.allowlist };
    let route: RouteSpec | null = null;
    let principal: Principal | undefined;
    let operationId: string | null = null;
    let body: unknown = undefined;
    let reachedHandler = false;
    try {
      if (!hostAllowed(req.headers.host, options.allowedHosts)) {
        throw refuse('ORIGIN_REJECTED', 'the Host header does not name this controller', 421);
      }
      if (req.headers.origin !== undefined) {
        throw refuse('ORIGIN_REJECTED', 'cross-origin requests are refused');
      }
      const match = matchRoute(req.method ?? '', req.url ?? '');
      if (match.route === null) throw refuse('OP_UNKNOWN', 'no such operation');
      route = match.route;
      if (route.request === null && hasBody(req)) {
        throw new FleetError('BAD_REQUEST', `${route.operation} takes no request body`);
      }
      const maxBodyBytes = route.maxBodyBytes ?? runtime.limits.maxBodyBytes;
      checkDeclaredLength(req, maxBodyBytes);
      const tokens = await runtime.tokens.current();
      const header = req.headers.authorization;
      principal = authenticate(header, tokens, runtime.legacy, runtime.clock.now());
      if (options.admitAuthenticated && !options.admitAuthenticated(req)) throw overloaded();
      authorize(principal, route);
      checkProtocol(route, req.headers[PROTOCOL_HEADER]);
      if (route.request !== null) {
        const type = req.headers['content-type'] ?? '';
        if (!/^application\/json\s*(;|$)/i.test(type)) {
          throw new FleetError('BAD_REQUEST', 'the request body must be application/json');
        }
        body = decodeJson(await readBody(req, maxBodyBytes), route.request);
        const id = (body as { operationId?: unknown }).operationId;
        if (typeof id === 'string') operationId = id;
      }
      reachedHandler = true;
      const result = await HANDLERS[route.operation]({
        runtime,
        principal,
        route,
        params: match.params,
        body,
      });
      const schema = result.status === 200 ? route.response : errorBodySchema;
      if (options.validateResponses && !schema.safeParse(result.body).success) {
        throw new FleetError('INTERNAL', `the ${route.operation} answer does not match its schema`);
      }
      noteDurability(runtime, codeIn(result.body));
      if (!result.audited) {
        const entry = answerEntry(
          route,
          principal,
          operationId,
          body,
          result.status,
          result.auditDetail,
        );
        if (route.audit === 'always' || (result.status !== 200 && operationId !== null)) {
          try {
            await runtime.audit.append(entry);
          } catch (error) {
            // Not audited, so not done (contract §15): the handler's effect is undone first.
            await result.undo?.();
            throw error;
          }
        } else if (result.status !== 200 || route.audit === 'read') {
          runtime.audit.countRead(entry);
        }
      }
      if (result.afterResponse) afterAnswer(res, result.afterResponse);
      setAuditHead(res, runtime);
      sendJson(res, result.status, result.body);
    } catch (error) {
      const wire = toWireError(error);
      noteDurability(runtime, wire.code);
      await auditFailure(
        runtime,
        req,
        { route, principal, operationId, body, reachedHandler },
        wire,
      );
      const redactor = await redactorOf(runtime).catch(() => undefined);
      if (principal !== undefined) setAuditHead(res, runtime);
      // A connection refused before it authenticated is closed: it frees its slot in the
      // unauthenticated budget (http/budget.ts) instead of idling in it.
      const close = wire.close === true || principal === undefined;
      sendJson(res, wire.status, redactOrMask(wire, redactor), { close });
      if (close) res.once('finish', () => req.socket.destroySoon());
    }
  };
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

/** What a read or write names: its paths, and a word on what was asked. */
function requested(route: RouteSpec, body: unknown): { paths: string[]; detail: string } {
  const request = (body ?? {}) as {
    path?: unknown;
    files?: unknown;
    prober?: unknown;
    probes?: unknown;
    tools?: unknown;
    artifact?: { sha256?: unknown; content?: unknown };
  };
  // A snapshot names its files as `{ domain, path }` (protocol 2); export and probe one `path`.
  const paths = Array.isArray(request.files)
    ? request.files
        .map((file) => (file as { path?: unknown } | null)?.path)
        .filter((p): p is string => typeof p === 'string')
    : typeof request.path === 'string'
      ? [request.path]
      : [];
  const detail =
    typeof request.prober === 'string'
      ? `prober ${request.prober}`
      : Array.isArray(request.probes) && request.probes.length > 0
        ? `${request.probes.length} prober(s)`
        : Array.isArray(request.tools)
          ? `${request.tools.length} tool(s)`
          : route.operation === 'runtime-stage' && typeof request.artifact?.sha256 === 'string'
            ? stageDetail(request.artifact.sha256, request.artifact.content !== undefined)
            : route.operation;
  return { paths, detail };
}

/** A stage's audit detail says whether the artifact was uploaded or the held one reused (§12). */
function stageDetail(sha256: string, uploaded: boolean): string {
  const build = sha256.slice(0, 12);
  return uploaded
    ? `runtime-stage ${build}: artifact uploaded`
    : `runtime-stage ${build}: held generation reused, not uploaded`;
}

function answerEntry(
  route: RouteSpec,
  principal: Principal,
  operationId: string | null,
  body: unknown,
  status: number,
  extra?: string,
): AuditEntry {
  const { paths, detail } = requested(route, body);
  return {
    operationId,
    client: principal.id,
    operation: route.operation,
    paths,
    files: [],
    outcome: status === 200 ? 'ok' : 'failed',
    code: null,
    detail: `${detail}${extra === undefined ? '' : `; ${extra}`}; answered ${status}`,
  };
}

/**
 * An install refused after its body passed the schema (a policy refusal, `LOCKED`, a stale sha256)
 * still names the commit its request did (contract §8.4): the schema made it a full commit id.
 */
function commitOf(route: RouteSpec | null, body: unknown): { repoCommit?: string | null } {
  if (route?.operation !== 'install') return {};
  const commit = (body as { repoCommit?: unknown } | undefined)?.repoCommit;
  return typeof commit === 'string' || commit === null ? { repoCommit: commit } : {};
}

/**
 * A refused token operation names what it asked for (contract §5 "Tokens"): the token id, or the
 * client, scopes and lifetime of the token it wanted — never a token.
 */
function tokenTarget(route: RouteSpec | null, body: unknown): string {
  const request = (body ?? {}) as {
    id?: unknown;
    client?: unknown;
    scopes?: unknown;
    ttlMs?: unknown;
  };
  if (route?.operation === 'token-issue' && typeof request.client === 'string') {
    const scopes = Array.isArray(request.scopes) ? request.scopes.join(',') : '';
    return `token-issue for ${request.client} [${scopes}] ttl ${String(request.ttlMs)} ms; `;
  }
  if (
    (route?.operation === 'token-rotate' || route?.operation === 'token-revoke') &&
    typeof request.id === 'string'
  ) {
    return `${route.operation} of token ${request.id}; `;
  }
  return '';
}

interface FailureContext {
  readonly route: RouteSpec | null;
  readonly principal: Principal | undefined;
  readonly operationId: string | null;
  readonly body: unknown;
  readonly reachedHandler: boolean;
}

/**
 * Every refusal and failure is audited (catalogue §2, invariant I4): with an operation id, its own record,
 * fsync'd; a read that reached its handler, one grouped record; anything refused before that —
 * no token, a bad one, a wrong scope, an unknown route, a body too large or malformed — is counted
 * per (client or remote address, operation, code) and written once per interval.
 */
async function auditFailure(
  runtime: ControllerRuntime,
  req: IncomingMessage,
  context: FailureContext,
  wire: WireError,
): Promise<void> {
  const { route, principal, operationId } = context;
  const outcome: AuditOutcome = DENIALS.has(wire.code) ? 'denied' : 'failed';
  if (operationId === null && !context.reachedHandler) {
    runtime.audit.countRefusal({
      client: principal?.id ?? null,
      remote: principal === undefined ? (req.socket.remoteAddress ?? 'unknown') : null,
      operation: route?.operation ?? 'unknown',
      outcome,
      code: wire.code,
      status: wire.status,
    });
    return;
  }
  const entry: AuditEntry = {
    operationId,
    client: principal?.id ?? null,
    operation: route?.operation ?? 'unknown',
    paths:
      wire.path !== undefined
        ? [wire.path]
        : route === null
          ? []
          : requested(route, context.body).paths,
    files: [],
    outcome,
    code: wire.code,
    detail: `${tokenTarget(route, context.body)}answered ${wire.status}`,
    ...commitOf(route, context.body),
  };
  if (operationId === null) {
    runtime.audit.countRead(entry);
    return;
  }
  try {
    await runtime.audit.append(entry);
  } catch {
    // The refusal stands either way: nothing was done.
  }
}
