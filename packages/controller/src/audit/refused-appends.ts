/**
 * Records that could not be appended (docs/audit-log.md, "A record of what could not be
 * written"): a full disk, a file-size limit, a write error. Each such request was refused — the
 * log fails closed — but without a record nothing on the node says so later. They are counted
 * here while the log cannot be written, and the first group that can be written afterwards
 * begins with one `audit.refused-appends` record: how many, between when and when, why, which
 * operations (and their ids). Retention keeps it as it keeps a write's record (rotation.ts).
 */
import type { AuditRecord } from '@fleet/core/node';

export const REFUSED_APPENDS_OPERATION = 'audit.refused-appends';

type Entry = Omit<AuditRecord, 'seq' | 'ts' | 'prev'>;

/** Operation ids named in the record at most (the count is always whole). */
const MAX_IDS = 16;

export class RefusedAppends {
  private count = 0;
  private first: string | undefined;
  private last: string | undefined;
  private readonly reasons = new Map<string, number>();
  private readonly operations = new Map<string, number>();
  private readonly ids: string[] = [];

  get size(): number {
    return this.count;
  }

  /** Counts the records of one group that could not be appended at `at`, and why. */
  note(entries: readonly Entry[], at: Date, reason: string): void {
    if (entries.length === 0) return;
    const when = at.toISOString();
    this.first ??= when;
    this.last = when;
    this.count += entries.length;
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + entries.length);
    for (const entry of entries) {
      this.operations.set(entry.operation, (this.operations.get(entry.operation) ?? 0) + 1);
      if (entry.operationId !== null && this.ids.length < MAX_IDS) this.ids.push(entry.operationId);
    }
  }

  /** One line for health while records wait to be accounted for; `undefined` when none do. */
  problem(): string | undefined {
    if (this.count === 0) return undefined;
    return `${this.count} record(s) could not be appended since ${this.first} (${tally(this.reasons)}); a record of them is written with the next append that succeeds`;
  }

  /** The record that accounts for them, or `undefined` when there is none to write. */
  entry(): Entry | undefined {
    if (this.count === 0) return undefined;
    const more = this.count > this.ids.length && this.ids.length > 0 ? ', …' : '';
    const ids = this.ids.length > 0 ? `; operation ids ${this.ids.join(', ')}${more}` : '';
    return {
      operationId: null,
      client: null,
      operation: REFUSED_APPENDS_OPERATION,
      paths: [],
      files: [],
      outcome: 'failed',
      code: 'AUDIT_UNAVAILABLE',
      detail: `${this.count} record(s) could not be appended between ${this.first} and ${this.last} (${tally(this.reasons)}): ${tally(this.operations)}; the request each would have recorded was refused, and nothing it asked was done${ids}`,
    };
  }

  /** Forgets what was counted, once its record is durable. */
  clear(): void {
    this.count = 0;
    this.first = undefined;
    this.last = undefined;
    this.reasons.clear();
    this.operations.clear();
    this.ids.length = 0;
  }
}

function tally(counts: ReadonlyMap<string, number>): string {
  return [...counts].map(([name, n]) => (n === 1 ? name : `${name} ×${n}`)).join(', ');
}
