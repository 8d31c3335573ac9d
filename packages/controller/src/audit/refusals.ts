/**
 * Refusals that carry no operation id — a 401, 403, 404, 408, 413 or 400 answered before a body
 * with an id was read — are counted, not written one by one (contract §15, docs/audit-log.md):
 * one audit record per (client or remote address, operation, code) per interval, with the count
 * and the first and last time. A flood of unauthenticated requests then costs a bounded number of
 * records per interval, however fast it comes. Pure: the log drains it on its timer.
 */
import type { AuditOutcome } from '@fleet/core/node';
import type { AuditEntry } from './entry.js';

export interface Refusal {
  /** The token's id when one was accepted (a 403), else `null`. */
  readonly client: string | null;
  /** The remote address (only when no client is known). */
  readonly remote: string | null;
  readonly operation: string;
  readonly outcome: AuditOutcome;
  readonly code: string;
  readonly status: number;
}

interface Count {
  readonly refusal: Refusal;
  count: number;
  readonly since: string;
  until: string;
}

/** Keys counted per interval at most; past it every new key is counted under `remote: "other"`. */
export const MAX_REFUSAL_KEYS = 256;

export class RefusalCounter {
  private counts = new Map<string, Count>();

  constructor(private readonly maxKeys = MAX_REFUSAL_KEYS) {}

  get size(): number {
    return this.counts.size;
  }

  count(refusal: Refusal, at: Date): void {
    let keyed = refusal.client === null ? refusal : { ...refusal, remote: null };
    let key = keyOf(keyed);
    if (!this.counts.has(key) && this.counts.size >= this.maxKeys) {
      keyed = { ...keyed, client: null, remote: 'other' };
      key = keyOf(keyed);
    }
    const ts = at.toISOString();
    const found = this.counts.get(key);
    if (found) {
      found.count += 1;
      found.until = ts;
    } else {
      this.counts.set(key, { refusal: keyed, count: 1, since: ts, until: ts });
    }
  }

  /** The records of everything counted since the last drain, and a fresh start. */
  drain(): AuditEntry[] {
    const entries = [...this.counts.values()].map(({ refusal, count, since, until }) => ({
      operationId: null,
      client: refusal.client,
      operation: refusal.operation,
      paths: [],
      files: [],
      outcome: refusal.outcome,
      code: refusal.code,
      detail: `${count} refusal${count === 1 ? '' : 's'} answered ${refusal.status}${refusal.remote === null ? '' : ` to ${refusal.remote}`}`,
      aggregate: { count, remote: refusal.remote, since, until },
    }));
    this.counts = new Map();
    return entries;
  }
}

function keyOf(refusal: Refusal): string {
  return JSON.stringify([
    refusal.client,
    refusal.remote,
    refusal.operation,
    refusal.code,
    refusal.status,
  ]);
}
