/** What every handler shares: the node's state, its stores and its limits. */
import {
  redactSecrets,
  type Clock,
  type JsonValue,
  type Registry,
  type SecretValues,
} from '@fleet/core';
import type { Allowlist } from './allowlist.js';
import type { AuditLog } from './audit/log.js';
import type { PathLocks } from './locks.js';
import type { OperationStore } from './operations.js';
import type { StatePaths } from './state-paths.js';
import type { NodePolicyStore, PolicyView } from './policy/store.js';
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
  /** Open connections at once; over it a connection gets 503 and is closed (default 256). */
  readonly maxConnections: number;
  /** How far an operation id's time may be ahead of or behind the node's clock (default 10 min). */
  readonly clockSkewMs: number;
  /** How long finished operation records are kept for replay and status (default 30 days). */
  readonly operationRetentionMs: number;
  /** Backups listed by one inventory at most. */
  readonly maxInventoryBackups: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 2 * 1024 * 1024,
  maxFileBytes: 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 256,
  clockSkewMs: 10 * 60_000,
  operationRetentionMs: 30 * 86_400_000,
  maxInventoryBackups: 1000,
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
  /** The env-file chain, loaded afresh (values may change between operations). */
  secrets(): Promise<SecretValues>;
}

/** `@fleet/controller@0.1.0+<sha256 prefix | dev>`: the `Fleet-Controller` trailer of adopt. */
export function buildLabel(runtime: ControllerRuntime): string {
  return `${runtime.package.name}@${runtime.package.version}+${runtime.build.sha256?.slice(0, 12) ?? 'dev'}`;
}

/** Redacts every string (and key) in a JSON value: facts leave the node too. */
export function redactJson(value: JsonValue, secrets: SecretValues): JsonValue {
  if (typeof value === 'string') return redactSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((item: JsonValue) => redactJson(item, secrets));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(value)) {
      out[redactSecrets(key, secrets)] = redactJson(item, secrets);
    }
    return out;
  }
  return value;
}
