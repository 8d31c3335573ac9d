/**
 * One request, start to end: Host and Origin checks, the default-deny route table, the declared
 * body size, authentication (before any body is read), scopes, the bounded and strictly decoded
 * body, the handler, and the answer — validated against the route's response schema when asked
 * (tests do). Every refusal and failure is one stable code, one HTTP status and one audit record;
 * error text is redacted like anything else leaving the node.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
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
} from '@fleet/core';
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
import type { Handler } from '../handlers/types.js';
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

export function createPipeline(shared: ControllerRuntime, options: PipelineOptions) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // One version of the node policy for the whole request (policy/store.ts).
    const view = await shared.policy.current();
    const runtime: ControllerRuntime = { ...shared, view, allowlist: view.allowlist };
    let route: RouteSpec | null = null;
    let principal: Principal | undefined;
    let operationId: string | null = null;
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
      authorize(principal, route);
      checkProtocol(route, req.headers[PROTOCOL_HEADER]);
      let body: unknown = undefined;
      if (route.request !== null) {
        const type = req.headers['content-type'] ?? '';
        if (!/^application\/json\s*(;|$)/i.test(type)) {
          throw new FleetError('BAD_REQUEST', 'the request body must be application/json');
        }
        body = decodeJson(await readBody(req, maxBodyBytes), route.request);
        const id = (body as { operationId?: unknown }).operationId;
        if (typeof id === 'string') operationId = id;
      }
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
      if (result.status !== 200 || route.audit === 'always' || result.audited) {
        if (!result.audited)
          await auditAnswer(runtime, route, principal, operationId, result.status);
      }
      if (result.afterResponse) afterAnswer(res, result.afterResponse);
      sendJson(res, result.status, result.body);
    } catch (error) {
      const wire = toWireError(error);
      await auditFailure(runtime, route, principal, operationId, wire);
      const redactor = await redactorOf(runtime).catch(() => undefined);
      sendJson(res, wire.status, redactOrMask(wire, redactor), { close: wire.close === true });
      if (wire.close) res.once('finish', () => req.socket.destroySoon());
    }
  };
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

async function auditAnswer(
  runtime: ControllerRuntime,
  route: RouteSpec,
  principal: Principal,
  operationId: string | null,
  status: number,
): Promise<void> {
  await runtime.audit.append({
    operationId,
    client: principal.id,
    operation: route.operation,
    paths: [],
    files: [],
    outcome: status === 200 ? 'ok' : 'failed',
    code: null,
    detail: `answered ${status}`,
  });
}

async function auditFailure(
  runtime: ControllerRuntime,
  route: RouteSpec | null,
  principal: Principal | undefined,
  operationId: string | null,
  wire: WireError,
): Promise<void> {
  const outcome: AuditOutcome = DENIALS.has(wire.code) ? 'denied' : 'failed';
  try {
    await runtime.audit.append({
      operationId,
      client: principal?.id ?? null,
      operation: route?.operation ?? 'unknown',
      paths: wire.path === undefined ? [] : [wire.path],
      files: [],
      outcome,
      code: wire.code,
      detail: `answered ${wire.status}`,
    });
  } catch {
    // The refusal stands either way: nothing was done.
  }
}
