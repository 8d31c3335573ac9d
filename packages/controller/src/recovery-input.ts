/**
 * What startup recovery (recovery.ts) and the settling of pending operations (settle-pending.ts)
 * are given: its own module, so that the two name it without importing each other.
 */
import type { AuditLog } from './audit/log.js';
import type { Allowlist } from './allowlist.js';
import type { OperationStore } from './operations.js';
import type { StatePaths } from './state-paths.js';

export interface RecoveryInput {
  readonly home: string;
  readonly state: StatePaths;
  readonly audit: AuditLog;
  readonly operations: OperationStore;
  readonly allowlist: Allowlist;
  readonly maxFileBytes: number;
  readonly now: () => Date;
  /**
   * This controller's `--node-id`: an operation answered before a coupled restart (journal event
   * `pending`) is settled against it — completed when it is the id expected, else rolled back.
   */
  readonly nodeId?: string;
}
