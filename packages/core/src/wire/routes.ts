/**
 * The controller's route table, as data (reliability catalogue, "Default-deny route table"):
 * every operation the node answers, its method and path, the scopes that open it, whether the
 * legacy shared token may call it, whether it changes the node, and its body schemas. Anything
 * not in this table is `OP_UNKNOWN` — never routed to a handler. Token administration is on the
 * wire for `node-admin:tokens` only (wire/tokens.ts); the node-local `fleet token --home` works on
 * the store directly.
 *
 * One file, long as it is: it is the one table of routes, read whole — what a node answers, and to
 * whom, is reviewed in one place, and a route left out of it is refused.
 */
import type * as z from 'zod';
import { operationIdSchema, type Scope } from './protocol.js';
import {
  captureRequestSchema,
  captureResponseSchema,
  exportRequestSchema,
  exportResponseSchema,
  healthResponseSchema,
  identityResponseSchema,
  installRequestSchema,
  installResponseSchema,
  inventoryResponseSchema,
  operationStatusResponseSchema,
  probeRequestSchema,
  probeResponseSchema,
} from './schemas.js';
import { snapshotRequestSchema, snapshotResponseSchema } from './snapshot.js';
import { auditReadRequestSchema, auditReadResponseSchema } from './audit-read.js';
import { versionsRequestSchema, versionsResponseSchema } from './versions.js';
import { nodeSummaryResponseSchema } from './summary.js';
import {
  issuedTokenResponseSchema,
  revokedTokenResponseSchema,
  tokenIssueRequestSchema,
  tokenLineageResponseSchema,
  tokenListResponseSchema,
  tokenRevokeRequestSchema,
  tokenRotateRequestSchema,
} from './tokens.js';
import {
  MAX_STAGE_BODY_BYTES,
  runtimeActivateRequestSchema,
  runtimeRollbackRequestSchema,
  runtimeStageRequestSchema,
  runtimeStageResponseSchema,
  runtimeStartedResponseSchema,
  runtimeStatusRequestSchema,
  runtimeStatusResponseSchema,
} from './runtime.js';

export const OPERATIONS = [
  'identity',
  'health',
  'inventory',
  'export',
  'install',
  'capture',
  'probe',
  'operation-status',
  'snapshot',
  'audit',
  'versions',
  'runtime-stage',
  'runtime-activate',
  'runtime-status',
  'runtime-rollback',
  'summary',
  'token-list',
  'token-lineage',
  'token-issue',
  'token-rotate',
  'token-revoke',
] as const;
export type OperationName = (typeof OPERATIONS)[number];

export interface RouteSpec {
  readonly operation: OperationName;
  readonly method: 'GET' | 'POST';
  /** Exact path; `:operationId` is the only parameter any route has. */
  readonly path: string;
  /** The token needs at least one of these scopes. Never empty. */
  readonly scopes: readonly Scope[];
  /** Whether the legacy shared token may call it (read operations only). */
  readonly legacy: boolean;
  /** Whether it changes the node (then it carries an operation id, single-use). */
  readonly mutates: boolean;
  /**
   * How a success is written to the audit log: `always` — its own record, fsync'd before the
   * answer (writes); `read` — one record per request, written in groups after the answer (a crash
   * may lose the last reads, never a write's record); `failures` — not at all (identity and
   * health, which reveal nothing of the node's files and are polled). Every failure is audited
   * whatever the operation; refusals before an operation id was read are counted per interval
   * (docs/audit-log.md).
   */
  readonly audit: 'always' | 'read' | 'failures';
  /** The request body's schema; `null` for a route without a body. */
  readonly request: z.ZodType | null;
  readonly response: z.ZodType;
  /** A larger body bound than the controller's default (the runtime artifact upload). */
  readonly maxBodyBytes?: number;
  /**
   * True for the routes any protocol version may call (identity, health, the runtime routes):
   * their paths and shapes never change, so any CLI can read any node's identity and upgrade or
   * roll back its runtime. Every other route needs the client's protocol to equal the node's.
   */
  readonly anyProtocol?: true;
}

/** Runtime upgrades and bootstrap (wire/runtime.ts); a bootstrap transaction needs the latter. */
const RUNTIME_WRITERS: readonly Scope[] = ['runtime:upgrade', 'node-admin:bootstrap'];

/** Scopes that may read the node's identity and health: any scope that talks to the node. */
const ANY_CLIENT: readonly Scope[] = [
  'config:read',
  'config:install',
  'config:adopt',
  'versions:read',
  'runtime:upgrade',
  'node-admin:bootstrap',
];

export const ROUTES: readonly RouteSpec[] = [
  {
    operation: 'identity',
    anyProtocol: true,
    method: 'GET',
    path: '/v1/identity',
    scopes: ANY_CLIENT,
    legacy: true,
    mutates: false,
    audit: 'failures',
    request: null,
    response: identityResponseSchema,
  },
  {
    operation: 'health',
    anyProtocol: true,
    method: 'GET',
    path: '/v1/health',
    scopes: ANY_CLIENT,
    legacy: true,
    mutates: false,
    audit: 'failures',
    request: null,
    response: healthResponseSchema,
  },
  {
    operation: 'inventory',
    method: 'GET',
    path: '/v1/inventory',
    scopes: ['config:read'],
    legacy: true,
    mutates: false,
    audit: 'read',
    request: null,
    response: inventoryResponseSchema,
  },
  {
    operation: 'export',
    method: 'POST',
    path: '/v1/export',
    scopes: ['config:read'],
    legacy: true,
    mutates: false,
    audit: 'read',
    request: exportRequestSchema,
    response: exportResponseSchema,
  },
  {
    operation: 'install',
    method: 'POST',
    path: '/v1/install',
    scopes: ['config:install'],
    legacy: false,
    mutates: true,
    audit: 'always',
    request: installRequestSchema,
    response: installResponseSchema,
  },
  {
    operation: 'capture',
    method: 'POST',
    path: '/v1/capture',
    scopes: ['config:adopt'],
    legacy: false,
    mutates: false,
    audit: 'always',
    request: captureRequestSchema,
    response: captureResponseSchema,
  },
  {
    // The route opens for any of these; the prober itself then needs its own scope
    // (see proberScope): a supervisor's runtime prober needs only a read scope.
    operation: 'probe',
    method: 'POST',
    path: '/v1/probe',
    scopes: ['config:read', 'versions:read', 'node-admin:bootstrap'],
    legacy: true,
    mutates: false,
    audit: 'read',
    request: probeRequestSchema,
    response: probeResponseSchema,
  },
  {
    // The config verbs' one read per host: every managed file asked for, with its backups.
    operation: 'snapshot',
    method: 'POST',
    path: '/v1/snapshot',
    scopes: ['config:read'],
    legacy: true,
    mutates: false,
    audit: 'read',
    request: snapshotRequestSchema,
    response: snapshotResponseSchema,
  },
  {
    // The audit log read back (wire/audit-read.ts). Not for the legacy token: the log names
    // clients, operations and paths.
    operation: 'audit',
    method: 'POST',
    path: '/v1/audit',
    scopes: ['config:read'],
    legacy: false,
    mutates: false,
    audit: 'read',
    request: auditReadRequestSchema,
    response: auditReadResponseSchema,
  },
  {
    // `fleet version`'s one read per host (wire/versions.ts): runtime identity, tool versions,
    // `fleet` along PATH, launchd agents on macOS. Read-only, so the legacy token may call it.
    operation: 'versions',
    method: 'POST',
    path: '/v1/versions',
    scopes: ['versions:read'],
    legacy: true,
    mutates: false,
    audit: 'read',
    request: versionsRequestSchema,
    response: versionsResponseSchema,
  },
  {
    operation: 'operation-status',
    method: 'GET',
    path: '/v1/operations/:operationId',
    scopes: ['config:read', 'config:install', 'config:adopt'],
    legacy: true,
    mutates: false,
    audit: 'read',
    request: null,
    response: operationStatusResponseSchema,
  },
  {
    // The artifact upload: begin + staged. Its scope is checked again per kind (a bootstrap
    // transaction needs node-admin:bootstrap, an upgrade runtime:upgrade).
    operation: 'runtime-stage',
    anyProtocol: true,
    method: 'POST',
    path: '/v1/runtime/stage',
    scopes: RUNTIME_WRITERS,
    legacy: false,
    mutates: true,
    audit: 'always',
    request: runtimeStageRequestSchema,
    response: runtimeStageResponseSchema,
    maxBodyBytes: MAX_STAGE_BODY_BYTES,
  },
  {
    operation: 'runtime-activate',
    anyProtocol: true,
    method: 'POST',
    path: '/v1/runtime/activate',
    scopes: RUNTIME_WRITERS,
    legacy: false,
    mutates: true,
    audit: 'always',
    request: runtimeActivateRequestSchema,
    response: runtimeStartedResponseSchema,
  },
  {
    // Bootstrap reads need node-admin:bootstrap (contract §5); an upgrade's operator may follow its
    // own transaction. Never the legacy token.
    operation: 'runtime-status',
    anyProtocol: true,
    method: 'POST',
    path: '/v1/runtime/status',
    scopes: RUNTIME_WRITERS,
    legacy: false,
    mutates: false,
    audit: 'read',
    request: runtimeStatusRequestSchema,
    response: runtimeStatusResponseSchema,
  },
  {
    operation: 'runtime-rollback',
    anyProtocol: true,
    method: 'POST',
    path: '/v1/runtime/rollback',
    scopes: ['node-admin:bootstrap'],
    legacy: false,
    mutates: true,
    audit: 'always',
    request: runtimeRollbackRequestSchema,
    response: runtimeStartedResponseSchema,
  },
  {
    // `fleet status`'s one read per host (wire/summary.ts): identity without the catalog, health,
    // and whether a runtime transaction is in progress or needs recovery — no journal detail, so
    // the everyday reading scopes open it (contract §5, §7).
    operation: 'summary',
    method: 'GET',
    path: '/v1/summary',
    scopes: ['config:read', 'versions:read', 'runtime:upgrade', 'node-admin:bootstrap'],
    legacy: true,
    mutates: false,
    audit: 'failures',
    request: null,
    response: nodeSummaryResponseSchema,
  },
  {
    // Token administration (wire/tokens.ts, contract §5): node-admin:tokens and nothing else,
    // never the legacy token. The list names clients and scopes, never a token or its hash.
    operation: 'token-list',
    method: 'GET',
    path: '/v1/tokens',
    scopes: ['node-admin:tokens'],
    legacy: false,
    mutates: false,
    audit: 'failures',
    request: null,
    response: tokenListResponseSchema,
  },
  {
    // The list with each token's minter and the minters above it (contract §5 "Tokens"): a new
    // route, so the list's answer keeps its shape for operators that predate lineage.
    operation: 'token-lineage',
    method: 'GET',
    path: '/v1/tokens/lineage',
    scopes: ['node-admin:tokens'],
    legacy: false,
    mutates: false,
    audit: 'failures',
    request: null,
    response: tokenLineageResponseSchema,
  },
  {
    operation: 'token-issue',
    method: 'POST',
    path: '/v1/tokens/issue',
    scopes: ['node-admin:tokens'],
    legacy: false,
    mutates: true,
    audit: 'always',
    request: tokenIssueRequestSchema,
    response: issuedTokenResponseSchema,
  },
  {
    operation: 'token-rotate',
    method: 'POST',
    path: '/v1/tokens/rotate',
    scopes: ['node-admin:tokens'],
    legacy: false,
    mutates: true,
    audit: 'always',
    request: tokenRotateRequestSchema,
    response: issuedTokenResponseSchema,
  },
  {
    operation: 'token-revoke',
    method: 'POST',
    path: '/v1/tokens/revoke',
    scopes: ['node-admin:tokens'],
    legacy: false,
    mutates: true,
    audit: 'always',
    request: tokenRevokeRequestSchema,
    response: revokedTokenResponseSchema,
  },
];

/** The route of an operation (every operation has exactly one). */
export function routeOf(operation: OperationName): RouteSpec {
  return ROUTES.find((route) => route.operation === operation) as RouteSpec;
}

/** The concrete path of a route, with its parameter filled in. */
export function routePath(operation: OperationName, operationId?: string): string {
  const { path } = routeOf(operation);
  return operationId === undefined ? path : path.replace(':operationId', operationId);
}

export type RouteMatch =
  | { readonly route: RouteSpec; readonly params: { readonly operationId?: string } }
  | { readonly route: null };

/**
 * Matches a raw request target exactly — no decoding, no normalisation: a query string, `%`
 * escapes, `..`, `//`, a trailing `/` or a different case are simply not in the table. A known
 * path with another method does not match either.
 */
export function matchRoute(method: string, target: string): RouteMatch {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    if (!route.path.includes(':')) {
      if (target === route.path) return { route, params: {} };
      continue;
    }
    const prefix = route.path.slice(0, route.path.indexOf(':'));
    if (!target.startsWith(prefix)) continue;
    const value = target.slice(prefix.length);
    if (operationIdSchema.safeParse(value).success)
      return { route, params: { operationId: value } };
  }
  return { route: null };
}

/** The prober fields a scope decision needs (a registry descriptor has them). */
export interface ProberScopeInput {
  readonly layer: 'file' | 'derived' | 'runtime' | 'version';
  readonly domain?: string;
}

/**
 * The scope a probe of one prober needs, on top of the route's: a `version` prober needs
 * `versions:read`; a domain's prober needs `config:read`; a supervisor's `runtime` prober (of no
 * domain, registered with a bootstrap adapter) needs nothing more than the route — `config:read`
 * through drift's snapshot, any read scope through the probe route — because its facts are the
 * controller's own supervision (unit or task state, generation, `--node-id`, the `current`
 * pointer, lingering), never a file's content, an environment or a secret (contract §5). Any
 * other prober of no domain is a bootstrap read (`node-admin:bootstrap`).
 */
export function proberScope(prober: ProberScopeInput): Scope | undefined {
  if (prober.layer === 'version') return 'versions:read';
  if (prober.domain === undefined)
    return prober.layer === 'runtime' ? undefined : 'node-admin:bootstrap';
  return 'config:read';
}
