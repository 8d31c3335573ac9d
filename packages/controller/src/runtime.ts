/** What every handler shares: the node's state, its stores and its limits. */
import {
  createRedactor,
  type Clock,
  type Redactor,
  type Registry,
  type SecretValues,
} from '@fleet/core/node';
import type { Allowlist } from './allowlist.js';
import type { AuditLog } from './audit/log.js';
import type { PathLocks } from './locks.js';
import type { OperationStore } from './operations.js';
import type { SecretMemory } from './secret-memory.js';
import type { StatePaths } from './state-paths.js';
import type { NodePolicyStore, PolicyView } from './policy/store.js';
import type { LoginPathCache } from './versions/login-path.js';
import type { TokenStore } from './tokens/store.js';

export interface Limits {
  /** Request body cap (default 2 MiB). */
  readonly maxBodyBytes: number;
  /** File content cap, for reads and writes (default 1 MiB). */
  readonly maxFileBytes: number;
  /** Time allowed for a request's headers (default 10 s; Node's is 60 s). */
  readonly headersTimeoutMs: number;
  /** Time allowed for a whole request (default 30 s; Node's is 300 s). */
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /**
   * Authenticated connections open at once (default 256): a request that authenticates on a
   * connection past it gets 503 `OVERLOADED` and the connection is closed. Connections that have
   * not authenticated yet have their own budget (below), so they can never use this one up.
   */
  readonly maxConnections: number;
  /**
   * Connections that have not authenticated yet, from all addresses together (default 256). When
   * it is full, a new connection closes the oldest idle one of the address holding the most —
   * if that address holds more than its share — or is answered 503 (http/budget.ts).
   */
  readonly maxUnauthenticatedConnections: number;
  /** An address's share of the unauthenticated budget (default 16). */
  readonly unauthenticatedPerAddress: number;
  /** How far an operation id's time may be ahead of or behind the node's clock (default 10 min). */
  readonly clockSkewMs: number;
  /** How long finished operation records are kept for replay and status (default 30 days). */
  readonly operationRetentionMs: number;
  /** Backups listed by one inventory at most. */
  readonly maxInventoryBackups: number;
  /** The audit log's active segment rotates at this size (default 8 MiB; docs/audit-log.md). */
  readonly auditSegmentBytes: number;
  /**
   * Closed audit segments kept (default 4); older ones are pruned, the rotation record says so —
   * never one holding a write's record the operator has not released (audit/rotation.ts).
   */
  readonly auditKeepSegments: number;
  /**
   * Closed audit segments held at most (default 32): the disk bound. With the active one, the log
   * takes at most (32 + 1) × 8 MiB plus one group of records; past it, appends are refused until
   * the operator releases segments (`fleet audit verify --home DIR --release`).
   */
  readonly auditMaxSegments: number;
  /** How long successful reads' records wait to be written together (default 200 ms). */
  readonly auditReadFlushMs: number;
  /** How long refusals without an operation id are counted per record (default 60 s). */
  readonly auditRefusalIntervalMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 2 * 1024 * 1024,
  maxFileBytes: 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 256,
  maxUnauthenticatedConnections: 256,
  unauthenticatedPerAddress: 16,
  clockSkewMs: 10 * 60_000,
  operationRetentionMs: 30 * 86_400_000,
  maxInventoryBackups: 1000,
  auditSegmentBytes: 8 * 1024 * 1024,
  auditKeepSegments: 4,
  auditMaxSegments: 32,
  auditReadFlushMs: 200,
  auditRefusalIntervalMs: 60_000,
};

export interface BuildIdentity {
  readonly sha256: string | null;
  readonly commit: string | null;
  /** The artifact's package (a generation's manifest), when it names one. */
  readonly package?: { readonly name: string; readonly version: string } | null;
}

export interface ControllerRuntime {
  readonly home: string;
  readonly nodeId: string;
  readonly registry: Registry;
  readonly state: StatePaths;
  readonly clock: Clock;
  readonly limits: Limits;
  /** The allowlist of `view` (the node policy version this request works with). */
  readonly allowlist: Allowlist;
  /** The node policy, read again when its file changes (policy/store.ts). */
  readonly policy: NodePolicyStore;
  /** The node policy version of this request (at start: the one the controller started with). */
  readonly view: PolicyView;
  readonly tokens: TokenStore;
  readonly legacy: Buffer | null;
  readonly audit: AuditLog;
  readonly operations: OperationStore;
  readonly locks: PathLocks;
  readonly package: { readonly name: string; readonly version: string };
  readonly build: BuildIdentity;
  readonly startedAt: string;
  /** What startup recovery did (for health). */
  readonly recovery: {
    readonly interrupted: number;
    readonly swept: number;
    readonly detail: string;
  };
  /** What degrades health until an operator acts, beside the audit log's own state. */
  readonly alarms: HealthAlarms;
  /** The env-file chain, loaded afresh (values may change between operations). */
  secrets(): Promise<SecretValues>;
  /** The values this node resolved and may still hold on disk (docs/secrets.md). */
  readonly secretMemory: SecretMemory;
  /** The user's login PATH, learned by this controller (versions/login-path.ts). */
  readonly loginPath: LoginPathCache;
}

/**
 * Conditions found while serving that keep health `degraded` until the controller is restarted
 * (docs/audit-log.md, "What degrades health"): today a failed fsync anywhere — the volume is
 * suspect (catalogue 26). Kept in memory and written to the audit log when it can be.
 */
export class HealthAlarms {
  private readonly raised = new Map<string, { detail: string; count: number }>();

  raise(name: string, detail: string): boolean {
    const found = this.raised.get(name);
    if (found) {
      found.count += 1;
      return false;
    }
    this.raised.set(name, { detail, count: 1 });
    return true;
  }

  list(): { name: string; detail: string }[] {
    return [...this.raised].map(([name, { detail, count }]) => ({
      name,
      detail: `${detail}${count > 1 ? ` (${count} times)` : ''}; health stays degraded until the controller is restarted`,
    }));
  }
}

/** `@fleet/controller@0.1.0+<sha256 prefix | dev>`: the `Fleet-Controller` trailer of adopt. */
export function buildLabel(runtime: ControllerRuntime): string {
  return `${runtime.package.name}@${runtime.package.version}+${runtime.build.sha256?.slice(0, 12) ?? 'dev'}`;
}

/**
 * The redactor for what leaves the node now: the env-file chain as it is, and every value the node
 * remembers (contract §15: rotated and removed ones too). Throws when the chain is unreadable.
 */
export async function redactorOf(runtime: ControllerRuntime): Promise<Redactor> {
  return redactorFor(runtime, await runtime.secrets());
}

/** The same, for a chain already loaded (or none: the remembered values alone). */
export function redactorFor(runtime: ControllerRuntime, chain: SecretValues | undefined): Redactor {
  return createRedactor(chain ?? new Map(), runtime.secretMemory.remembered());
}
