/**
 * The audit records of the request pipeline (pipeline.ts): what an answer its handler did not
 * audit itself is recorded as, and how every refusal and failure is audited (catalogue §2,
 * invariant I4) — what a request names (its paths, a word on what it asked, a refused token
 * operation's target, an install's commit), never a secret or a token.
 */
import type { IncomingMessage } from 'node:http';
import type { AuditOutcome, RouteSpec } from '@fleet/core/node';
import type { AuditEntry } from '../audit/log.js';
import type { HandlerResult } from '../handlers/types.js';
import type { ControllerRuntime } from '../runtime.js';
import type { Principal } from '../tokens/auth.js';
import type { WireError } from './respond.js';

/** The codes a refusal is audited with as `denied` rather than `failed`. */
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

/**
 * The audit of an answer its handler did not audit itself: an `always` route, or a failed
 * operation with an id, gets its own record (not audited, not done: the effect is undone); any
 * other failure and every read of a `read` route is counted.
 */
export async function auditAnswer(
  runtime: ControllerRuntime,
  route: RouteSpec,
  principal: Principal,
  operationId: string | null,
  body: unknown,
  result: HandlerResult,
): Promise<void> {
  const entry = answerEntry(route, principal, operationId, body, result.status, result.auditDetail);
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

export interface FailureContext {
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
export async function auditFailure(
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
