/**
 * What waits for the audit log's next group (contract §15; docs/audit-log.md, "What is counted
 * instead of written" and "Reads"): reads counted per client and interval (reads.ts), refusals
 * counted per interval (refusals.ts), notices appended without the caller waiting, the timers
 * that ask the log for a group, and the count of records that could not be written. The log
 * (log.ts) takes what waits into each group, ahead of its own records.
 */
import type { Clock } from '@fleet/core/node';
import type { AuditEntry } from './entry.js';
import { ReadCounter } from './reads.js';
import { RefusalCounter, type Refusal } from './refusals.js';

/** Read records written in one group at most (one write, one fsync). */
const MAX_READ_GROUP = 512;

export interface PendingOptions {
  readonly clock: Clock;
  /** How long read records wait to be written together. */
  readonly readFlushMs: number;
  /** How long refusals are counted before their records are written. */
  readonly refusalIntervalMs: number;
  /** Whether the log attempts appends at all; when not, a record is counted as not written. */
  readonly writable: () => boolean;
  /** Asks the log for a group of what waits, without waiting for it. */
  readonly writeGroup: () => void;
}

export class PendingRecords {
  private entries: AuditEntry[] = [];
  private readonly refusals = new RefusalCounter();
  private readonly reads = new ReadCounter();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly refusalTimer: NodeJS.Timeout;
  /** Read and refusal records that could not be written (the log refused, or a group failed). */
  private lost = 0;

  constructor(private readonly options: PendingOptions) {
    this.refusalTimer = setInterval(() => this.drainCounted(), options.refusalIntervalMs);
    this.refusalTimer.unref();
  }

  /** Records waiting for the next group (the counts not yet drained aside). */
  get size(): number {
    return this.entries.length;
  }

  /** Read and refusal records that could not be written. */
  get unaudited(): number {
    return this.lost;
  }

  /** Counts `count` records that could not be written (a group failed). */
  notWritten(count: number): void {
    this.lost += count;
  }

  /** A read's record, counted per client and interval (reads.ts). */
  countRead(entry: AuditEntry): void {
    if (!this.options.writable()) {
      this.lost += 1;
      return;
    }
    this.reads.count(entry, this.options.clock.now());
  }

  /** A notice, written with a group soon (at once when a group's worth waits). */
  appendRead(entry: AuditEntry): void {
    if (!this.options.writable()) {
      this.lost += 1;
      return;
    }
    this.entries.push(entry);
    this.scheduleFlush(this.entries.length >= MAX_READ_GROUP ? 0 : this.options.readFlushMs);
  }

  /** Counts a refusal that carried no operation id (written per interval, refusals.ts). */
  countRefusal(refusal: Refusal): void {
    this.refusals.count(refusal, this.options.clock.now());
  }

  /** The reads counted so far, made to wait for the next group (so the log keeps their order). */
  queueCountedReads(): void {
    if (this.reads.size > 0) this.entries.push(...this.reads.drain());
  }

  /** The reads and refusals counted so far, made to wait; with `write`, a group asked for now. */
  drainCounted(write = true): void {
    if (this.refusals.size === 0 && this.reads.size === 0) return;
    const entries = [...this.reads.drain(), ...this.refusals.drain()];
    if (!this.options.writable()) {
      this.lost += entries.length;
      return;
    }
    this.entries.push(...entries);
    if (write) this.scheduleFlush(0);
  }

  /** Everything waiting, taken for a group. */
  take(): AuditEntry[] {
    return this.entries.splice(0);
  }

  /** Stops the timers (the log is closing, or never opened). */
  stop(): void {
    clearInterval(this.refusalTimer);
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  private scheduleFlush(ms: number): void {
    if (this.flushTimer !== undefined) {
      if (ms > 0) return;
      clearTimeout(this.flushTimer);
    }
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      if (this.entries.length > 0) this.options.writeGroup();
    }, ms);
    this.flushTimer.unref();
  }
}
