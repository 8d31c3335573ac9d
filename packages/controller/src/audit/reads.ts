/**
 * Reads counted per client and interval, as refusals are (refusals.ts; contract §15,
 * docs/audit-log.md "Reads"): a read — answered or refused after its handler ran, without an
 * operation id — is one count under (client, operation, outcome, code, detail), and each key is one
 * audit record per interval with the count, the first and last time and the paths read (at most
 * {@link MAX_READ_PATHS}; the detail says how many more). However fast reads come, they cost at
 * most {@link MAX_READ_KEYS} + 1 records per interval, so they can no longer flush the write trail
 * out of the log's retention (finding: 170,000 inventory reads rotated every install record out in
 * 75 s). Pure: the log drains it on its timer and before every write.
 */
import type { AuditEntry } from './entry.js';

/** Keys counted per interval at most; past it every new key is counted under client `other`. */
export const MAX_READ_KEYS = 256;
/** Distinct paths one read record names at most. */
export const MAX_READ_PATHS = 64;

interface Count {
  readonly entry: AuditEntry;
  count: number;
  readonly paths: Set<string>;
  morePaths: number;
  readonly since: string;
  until: string;
}

export class ReadCounter {
  private counts = new Map<string, Count>();

  constructor(private readonly maxKeys = MAX_READ_KEYS) {}

  get size(): number {
    return this.counts.size;
  }

  count(entry: AuditEntry, at: Date): void {
    let keyed = entry;
    let key = keyOf(keyed);
    if (!this.counts.has(key) && this.counts.size >= this.maxKeys) {
      keyed = { ...entry, client: 'other', detail: entry.operation };
      key = keyOf(keyed);
    }
    const ts = at.toISOString();
    let found = this.counts.get(key);
    if (found === undefined) {
      found = { entry: keyed, count: 0, paths: new Set(), morePaths: 0, since: ts, until: ts };
      this.counts.set(key, found);
    }
    found.count += 1;
    found.until = ts;
    for (const path of entry.paths) {
      if (found.paths.has(path)) continue;
      if (found.paths.size < MAX_READ_PATHS) found.paths.add(path);
      else found.morePaths += 1;
    }
  }

  /** The records of everything counted since the last drain, and a fresh start. */
  drain(): AuditEntry[] {
    const entries = [...this.counts.values()].map(
      ({ entry, count, paths, morePaths, since, until }): AuditEntry => ({
        ...entry,
        paths: [...paths],
        detail: `${count} read${count === 1 ? '' : 's'}: ${entry.detail}${morePaths > 0 ? `; ${morePaths} more path(s) not named` : ''}`,
        aggregate: { count, remote: null, since, until },
      }),
    );
    this.counts = new Map();
    return entries;
  }
}

function keyOf(entry: AuditEntry): string {
  return JSON.stringify([entry.client, entry.operation, entry.outcome, entry.code, entry.detail]);
}
