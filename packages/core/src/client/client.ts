/**
 * The operator's typed client of one controller (contract §5): one method per route of the wire
 * protocol's `ROUTES` table. Every request body is validated with the route's schema before a
 * byte is sent (a malformed request is the operator side's bug, exit 2, and never reaches the
 * node), and every answer is validated with the route's response schema before a caller sees it.
 */
import { ulid } from 'ulid';
import type * as z from 'zod';
import { FleetError } from '../errors.js';
import { zodProblems } from '../zod-problems.js';
import { routeOf, routePath, type OperationName } from '../wire/routes.js';
import type {
  CaptureRequest,
  CaptureResponse,
  ExportRequest,
  ExportResponse,
  Health,
  IdentityResponse,
  InstallRequest,
  InstallResponse,
  InventoryResponse,
  OperationStatusResponse,
  ProbeRequest,
  ProbeResponse,
} from '../wire/schemas.js';
import { operationIdSchema } from '../wire/protocol.js';
import type { SnapshotRequest, SnapshotResponse } from '../wire/snapshot.js';
import type { AuditReadRequest, AuditReadResponse } from '../wire/audit-read.js';
import type { VersionsRequest, VersionsResponse } from '../wire/versions.js';
import type {
  RuntimeActivateRequest,
  RuntimeRollbackRequest,
  RuntimeStageRequest,
  RuntimeStageResponse,
  RuntimeStartedResponse,
  RuntimeStatusRequest,
  RuntimeStatusResponse,
} from '../wire/runtime.js';
import type {
  IssuedTokenResponse,
  RevokedTokenResponse,
  TokenIssueRequest,
  TokenLineageResponse,
  TokenListResponse,
  TokenRevokeRequest,
  TokenRotateRequest,
} from '../wire/tokens.js';
import type { NodeSummaryResponse } from '../wire/summary.js';
import type { HostConnections } from './connections.js';
import { invalidResponse, type RequestTarget } from './errors.js';

/** Per-request deadline when the caller sets none: connect, TLS, request and answer together. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Largest answer accepted: an export is bounded at 1 MiB on the node, JSON escaping adds some. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export interface ControllerClientOptions {
  /** The host's name in fleet.yaml (every error names it). */
  readonly host: string;
  /** The controller's origin, `http://127.0.0.1:7701` or `https://…`. */
  readonly url: string;
  /** The operator's token for this host (credentials file); never logged, never in an error. */
  readonly token: string;
  /** fleet.yaml's `tls.fingerprint` (`sha256:AB:CD:…`); required for https. */
  readonly tlsFingerprint?: string | undefined;
  /** Deadline of each request, in milliseconds (default {@link DEFAULT_TIMEOUT_MS}). */
  readonly timeoutMs?: number | undefined;
  readonly maxResponseBytes?: number | undefined;
}

/** A mutating request: the operation id is generated when the caller does not bring one. */
export type WithOperationId<T extends { operationId: string }> = Omit<T, 'operationId'> & {
  readonly operationId?: string;
};

export interface ControllerClient {
  readonly host: string;
  readonly url: string;
  identity(): Promise<IdentityResponse>;
  health(): Promise<Health>;
  inventory(): Promise<InventoryResponse>;
  export(request: ExportRequest): Promise<ExportResponse>;
  /** `POST /v1/install`; the receipt carries the operation id that was sent. */
  install(request: WithOperationId<InstallRequest>): Promise<InstallResponse>;
  capture(request: WithOperationId<CaptureRequest>): Promise<CaptureResponse>;
  probe(request: ProbeRequest): Promise<ProbeResponse>;
  operationStatus(operationId: string): Promise<OperationStatusResponse>;
  /** `POST /v1/snapshot`: the config verbs' one read per host. */
  snapshot(request: SnapshotRequest): Promise<SnapshotResponse>;
  /** `POST /v1/audit`: one page of the node's audit log, its lines verbatim (`config:read`). */
  audit(request: AuditReadRequest): Promise<AuditReadResponse>;
  /** `POST /v1/versions`: `fleet version`'s one read per host (`versions:read`). */
  versions(request: VersionsRequest): Promise<VersionsResponse>;
  /** `POST /v1/runtime/stage`: upload and stage an artifact, opening a transaction. */
  runtimeStage(request: WithOperationId<RuntimeStageRequest>): Promise<RuntimeStageResponse>;
  /** `POST /v1/runtime/activate`: a detached runner takes the staged transaction on. */
  runtimeActivate(
    request: WithOperationId<RuntimeActivateRequest>,
  ): Promise<RuntimeStartedResponse>;
  /** `POST /v1/runtime/status`: the journal reconciled with observation. */
  runtimeStatus(request: RuntimeStatusRequest): Promise<RuntimeStatusResponse>;
  /** `POST /v1/runtime/rollback`: back to the prior generation, by a detached runner. */
  runtimeRollback(
    request: WithOperationId<RuntimeRollbackRequest>,
  ): Promise<RuntimeStartedResponse>;
  /** `GET /v1/summary`: `fleet status`'s one read per host. */
  summary(): Promise<NodeSummaryResponse>;
  /** `GET /v1/tokens`: the node's tokens, never a token itself (`node-admin:tokens`). */
  tokenList(): Promise<TokenListResponse>;
  /** `GET /v1/tokens/lineage`: the list with each token's minter and lineage (`OP_UNKNOWN` on a node that predates it). */
  tokenLineage(): Promise<TokenLineageResponse>;
  /** `POST /v1/tokens/issue`: a new token, shown once, with at most the caller's scopes. */
  tokenIssue(request: WithOperationId<TokenIssueRequest>): Promise<IssuedTokenResponse>;
  /** `POST /v1/tokens/rotate`: a new token for the same client and scopes; the old one in grace. */
  tokenRotate(request: WithOperationId<TokenRotateRequest>): Promise<IssuedTokenResponse>;
  /** `POST /v1/tokens/revoke`: refused for the caller's own token unless `self` says so. */
  tokenRevoke(request: WithOperationId<TokenRevokeRequest>): Promise<RevokedTokenResponse>;
  /**
   * Closes the client's keep-alive connection (contract §14: one per host). Requests made after it
   * open a new one. Idle connections never keep a process alive, so a verb that forgets this
   * still exits; calling it ends the connection at once instead of when the process ends.
   */
  close(): void;
}

/**
 * A new operation id: a ULID (contract §5), sortable by time, the key shared by the node's audit
 * record and the operator's log line.
 */
export function newOperationId(): string {
  return ulid();
}

/** Checked request bodies remembered per schema, by their JSON text, and the largest one kept. */
const checkedBodies = new WeakMap<z.ZodType, Map<string, unknown>>();
const CHECKED_BODY_ENTRIES = 64;
const CHECKED_BODY_BYTES = 64 * 1024;

/**
 * The route's schema applied to the JSON that goes on the wire (`body` as `JSON.stringify` sends
 * it). A fleet-wide read sends every host the same body (contract §14: 1,000 hosts, one check),
 * so a text already checked against this schema is not checked again; bodies over
 * {@link CHECKED_BODY_BYTES} (an install's contents) and those past the first
 * {@link CHECKED_BODY_ENTRIES} (each mutating request's own operation id) are always checked.
 */
function checkedRequest(target: RequestTarget, schema: z.ZodType, body: unknown): unknown {
  const text = JSON.stringify(body) as string | undefined;
  let known = checkedBodies.get(schema);
  const remembered = text === undefined ? undefined : known?.get(text);
  if (remembered !== undefined) return remembered;
  const result = schema.safeParse(text === undefined ? undefined : JSON.parse(text));
  if (!result.success) {
    throw new FleetError('BAD_REQUEST', `${target.host}: invalid ${target.operation} request`, {
      problems: zodProblems(result.error, `${target.operation} request`),
    });
  }
  if (text !== undefined && text.length <= CHECKED_BODY_BYTES && result.data !== undefined) {
    if (known === undefined) checkedBodies.set(schema, (known = new Map<string, unknown>()));
    if (known.size < CHECKED_BODY_ENTRIES) known.set(text, result.data);
  }
  return result.data;
}

function isHttps(url: string): boolean {
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false; // the exchange reports the bad URL
  }
}

/** The transport's modules, loaded on the first request of the process. */
let transport:
  | Promise<
      Pick<typeof import('./transport.js'), 'exchange'> &
        Pick<typeof import('./connections.js'), 'hostConnections'>
    >
  | undefined;
const loadTransport = async () => {
  const [{ exchange }, { hostConnections }] = await Promise.all([
    import('./transport.js'),
    import('./connections.js'),
  ]);
  return { exchange, hostConnections };
};

// Long as a factory: its methods are one-line calls through the shared `call` below.
export function createControllerClient(options: ControllerClientOptions): ControllerClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new FleetError(
      'USAGE',
      `host ${options.host}: the timeout must be a positive number of milliseconds`,
    );
  }

  // The keep-alive pool, made with the first request (node:http loads then, not with core).
  let connections: HostConnections | undefined;

  async function call<T>(
    operation: OperationName,
    body?: unknown,
    operationId?: string,
  ): Promise<T> {
    const route = routeOf(operation);
    const target: RequestTarget = { host: options.host, url: options.url, operation };
    const payload =
      route.request === null ? undefined : checkedRequest(target, route.request, body);
    // node:net and node:tls load on the first request, not with core: most commands never talk
    // to a node. Loaded once per process (a fleet-wide verb makes a thousand calls).
    const { exchange, hostConnections } = await (transport ??= loadTransport());
    connections ??= hostConnections({
      target,
      tlsFingerprint: isHttps(options.url) ? options.tlsFingerprint : undefined,
      connectTimeoutMs: timeoutMs,
    });
    const answer = await exchange({
      connections,
      target,
      method: route.method,
      path: routePath(operation, operationId),
      token: options.token,
      body: payload,
      tlsFingerprint: options.tlsFingerprint,
      timeoutMs,
      maxResponseBytes,
      checkProtocol: route.anyProtocol !== true,
    });
    const result = route.response.safeParse(answer.body);
    if (!result.success) {
      const first = zodProblems(result.error, 'answer')[0];
      throw invalidResponse(
        target,
        first ? `${first.path ?? ''} ${first.message}`.trim() : 'schema mismatch',
      );
    }
    return result.data as T;
  }

  return {
    host: options.host,
    url: options.url,
    close() {
      connections?.close();
      connections = undefined;
    },
    identity: () => call<IdentityResponse>('identity'),
    health: () => call<Health>('health'),
    inventory: () => call<InventoryResponse>('inventory'),
    export: (request) => call<ExportResponse>('export', request),
    install: (request) =>
      call<InstallResponse>('install', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    capture: (request) =>
      call<CaptureResponse>('capture', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    probe: (request) => call<ProbeResponse>('probe', request),
    snapshot: (request) => call<SnapshotResponse>('snapshot', request),
    audit: (request) => call<AuditReadResponse>('audit', request),
    versions: (request) => call<VersionsResponse>('versions', request),
    runtimeStage: (request) =>
      call<RuntimeStageResponse>('runtime-stage', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    runtimeActivate: (request) =>
      call<RuntimeStartedResponse>('runtime-activate', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    runtimeStatus: (request) => call<RuntimeStatusResponse>('runtime-status', request),
    runtimeRollback: (request) =>
      call<RuntimeStartedResponse>('runtime-rollback', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    summary: () => call<NodeSummaryResponse>('summary'),
    tokenList: () => call<TokenListResponse>('token-list'),
    tokenLineage: () => call<TokenLineageResponse>('token-lineage'),
    tokenIssue: (request) =>
      call<IssuedTokenResponse>('token-issue', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    tokenRotate: (request) =>
      call<IssuedTokenResponse>('token-rotate', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    tokenRevoke: (request) =>
      call<RevokedTokenResponse>('token-revoke', {
        ...request,
        operationId: request.operationId ?? newOperationId(),
      }),
    operationStatus: async (operationId) => {
      // Checked here: an id that is not a ULID would build a path the route table never matches.
      if (!operationIdSchema.safeParse(operationId).success) {
        throw new FleetError(
          'USAGE',
          `${JSON.stringify(operationId)} is not an operation id (a ULID)`,
        );
      }
      return call<OperationStatusResponse>('operation-status', undefined, operationId);
    },
  };
}
