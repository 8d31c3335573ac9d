/**
 * A group of entries as the log's chained lines (contract §9; docs/audit-log.md, "Records"): each
 * record numbered after the last (`seq`), stamped with the group's time (`ts`) and chained to the
 * hash of the line before it (`prev`). Pure: the log (log.ts) writes the bytes and, once they are
 * durable, takes the new tail as its head.
 */
import { auditLineHash } from '@fleet/core/node';
import type { AuditEntry } from './entry.js';

/** The log's last record: its number, its line hash, and its line as on disk. */
export interface Tail {
  readonly seq: number;
  readonly hash: string;
  /** The last record's line and its newline, as on disk: what a cut back is verified against. */
  readonly line: Buffer;
}

/** `entries` as lines chained after `from`, all stamped `at`: their bytes and the tail they make. */
export function chainLines(
  entries: readonly AuditEntry[],
  from: Tail,
  at: string,
): { readonly tail: Tail; readonly bytes: Buffer } {
  let tail = from;
  const lines: Buffer[] = [];
  for (const entry of entries) {
    const line = JSON.stringify({ seq: tail.seq + 1, ts: at, prev: tail.hash, ...entry });
    const bytes = Buffer.from(`${line}\n`, 'utf8');
    tail = { seq: tail.seq + 1, hash: auditLineHash(line), line: bytes };
    lines.push(bytes);
  }
  return { tail, bytes: Buffer.concat(lines) };
}
