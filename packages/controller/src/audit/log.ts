/**
 * The node's audit log (contract §5, §15; docs/audit-log.md): hash-chained JSON lines in
 * `~/.local/state/fleet/`, 0600, the record shape and verifier core's (`auditRecordSchema`,
 * `verifyAuditSegments`). Segment files and start-up checks are in segments.ts.
 *
 * - **Fails closed.** A write's record is written and fsync'd before the caller answers. Every
 *   write's byte count is checked; on a short write or a write/fsync error the file is cut back to
 *   the end of the last whole record — verified on disk, never truncated *up* — and the caller
 *   gets `AUDIT_UNAVAILABLE` and undoes its operation. Health stays degraded until a restart.
 *   When the cut cannot be verified, or an fsync failed (the volume is suspect, catalogue 26),
 *   or the file was replaced or changed under the controller, every later write is refused too.
 * - **Verified whole at start.** A broken chain (edited, removed, reordered, cut, a NUL hole, a
 *   missing segment) refuses writes — reads still work — and health says where. A torn last line
 *   (catalogue 27) is moved aside to `audit.jsonl.torn-<ts>` and a `recovered` record appended.
 * - **Rotates** at a size bound into chained segments and keeps a bounded number of them; a
 *   segment holding a write's record is pruned only once the operator released it (rotation.ts).
 * - **Reads and refusals are counted.** Reads and refusals without an operation id are counted
 *   per client (or address) and interval, one record per key (reads.ts, refusals.ts), written in
 *   groups, one fsync per group (a crash may lose the last interval's counts, never a write's
 *   record): reads cannot flush the write trail out.
 *
 * - **One chain, two writers.** The SSH recovery receiver appends its stage and activate records
 *   beside a running controller: both hold the append lock (append-lock.ts) while they write, and
 *   the controller adopts what the receiver appended since its last group (adopt.ts).
 * - **Refused appends are accounted for.** Records that could not be appended (a full disk) are
 *   counted, and the first group written afterwards says how many, when and why
 *   (refused-appends.ts).
 *
 * One class, because one object owns the file and its head; what can be apart is: start-up in
 * segments.ts, the rotation plan (pure) in rotation.ts, what waits for the next group (the reads
 * and refusals counted, their timers) in pending-records.ts, a group's chained lines in
 * chained-lines.ts, a failed write's cut back in failed-write.ts, and the final records recovery
 * reads in final-records.ts.
 */
import { constants, lstatSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AUDIT_ACTIVE_SEGMENT,
  AUDIT_GENESIS,
  FleetError,
  orderAuditSegments,
  type AuditHead,
  type Clock,
} from '@fleet/core/node';
import { createExclusive, fsyncDir } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { open, rename, unlink, type DurableHandle } from '../fs/seam.js';
import { failpoint } from '../failpoints.js';
import { MAX_ADOPTED_BYTES, adoptAppended } from './adopt.js';
import { withAuditLock } from './append-lock.js';
import { chainLines, type Tail } from './chained-lines.js';
import type { AuditEntry } from './entry.js';
import { ShortWriteError, cutBack, reasonOf } from './failed-write.js';
import { readFinalRecords } from './final-records.js';
import { PendingRecords } from './pending-records.js';
import { RefusedAppends } from './refused-appends.js';
import type { Refusal } from './refusals.js';
import { holdsWrite, planRotation, type ClosedSegment } from './rotation.js';
import { NEXT_SEGMENT, inspectLog, prunable, readReleaseFile, writeHeadFile } from './segments.js';

export type { AuditEntry } from './entry.js';

export interface AuditLogOptions {
  readonly clock: Clock;
  /** The active segment rotates once it holds this many bytes. */
  readonly segmentBytes: number;
  /**
   * Closed segments kept; older ones are pruned at a rotation (the rotation record says so) —
   * never one holding a write's record the operator has not released (rotation.ts).
   */
  readonly keepSegments: number;
  /**
   * Closed segments held at most: past it, a rotation that could prune nothing more refuses
   * every append (`AUDIT_UNAVAILABLE`, health degraded) until the operator releases segments.
   */
  readonly maxSegments: number;
  /** How long read records wait to be written together. */
  readonly readFlushMs: number;
  /** How long refusals are counted before their records are written. */
  readonly refusalIntervalMs: number;
}

/** What an operator does about a refused log (docs/audit-log.md). */
const REPAIR_HINT = 'see `fleet audit verify --home DIR`; `--repair` seals the log aside';

export class AuditLog {
  private queue: Promise<unknown> = Promise.resolve();
  private handle: DurableHandle | undefined;
  private size = 0;
  private last: Tail = { seq: 0, hash: AUDIT_GENESIS, line: Buffer.alloc(0) };
  private active: { firstSeq: number; firstPrev: string } | null = null;
  /** Whether the active segment holds a write's record (what retention must keep). */
  private activeHoldsWrites = false;
  private closed: ClosedSegment[] = [];
  private refusedBecause: string | undefined;
  private readonly alarms: string[] = [];
  /** The reads, notices and counted refusals waiting for the next group. */
  private readonly pending: PendingRecords;
  /** Write records that could not be appended, until a record of them is durable. */
  private readonly refusedAppends = new RefusedAppends();
  /** Why the last append was refused (what the record of refused appends says). */
  private lastWhy: string | undefined;
  /** Rotations since start: a reader of several segments retries when this moves under it. */
  rotations = 0;
  /** The file the torn tail was moved to at open, if there was one. */
  tornMovedTo: string | undefined;

  private constructor(
    private readonly dir: string,
    private readonly options: AuditLogOptions,
  ) {
    this.pending = new PendingRecords({
      clock: options.clock,
      readFlushMs: options.readFlushMs,
      refusalIntervalMs: options.refusalIntervalMs,
      writable: () => this.writable(),
      writeGroup: () => void this.enqueue(() => this.writeGroup([])).catch(() => undefined),
    });
  }

  private get activePath(): string {
    return join(this.dir, AUDIT_ACTIVE_SEGMENT);
  }

  /** Opens the log of the state directory `dir`: finishes a rotation, verifies the whole chain. */
  static async open(dir: string, options: AuditLogOptions): Promise<AuditLog> {
    const log = new AuditLog(dir, options);
    try {
      await log.load();
    } catch (error) {
      log.pending.stop();
      await log.handle?.close().catch(() => undefined);
      throw error;
    }
    if (log.tornMovedTo !== undefined && log.writable()) {
      await log.append({
        operationId: null,
        client: null,
        operation: 'audit.recover',
        paths: [],
        files: [],
        outcome: 'recovered',
        code: null,
        detail: `a torn last line was moved aside to ${log.tornMovedTo}`,
      });
    }
    return log;
  }

  /** Under the append lock: a receiver appending meanwhile is not cut off as a torn tail. */
  private load(): Promise<void> {
    return withAuditLock(this.dir, () => this.loadLocked());
  }

  private async loadLocked(): Promise<void> {
    const found = await inspectLog(this.dir, this.options.clock.now());
    this.tornMovedTo = found.tornMovedTo;
    this.closed = [...found.closed];
    if (found.head) this.last = found.head;
    if (found.broken !== undefined) {
      this.refuse(`${found.broken}; writes are refused, reads still work; ${REPAIR_HINT}`);
      return;
    }
    this.handle = await open(
      this.activePath,
      constants.O_RDWR | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
    const stats = await this.handle.stat();
    if ((stats.mode & 0o077) !== 0 && process.platform !== 'win32') await this.handle.chmod(0o600);
    await fsyncDir(this.dir, 'state directory');
    this.active = found.active;
    this.activeHoldsWrites = found.activeHoldsWrites;
    this.size = found.activeBytes;
    // Segments a crash left behind a rotation that had already said they were pruned.
    const stale = prunable(found.segments);
    for (const name of stale) await unlink(join(this.dir, name)).catch(() => undefined);
    if (stale.length > 0) {
      this.closed = this.closed.filter((c) => !stale.includes(c.name));
      await fsyncDir(this.dir, 'state directory');
    }
  }

  /** The last durable record's sequence number and line hash. */
  head(): AuditHead {
    return { seq: this.last.seq, sha256: this.last.hash };
  }

  /** Whether appends are attempted at all (false: the chain is broken or the log suspect). */
  writable(): boolean {
    return this.refusedBecause === undefined && this.handle !== undefined;
  }

  /** `undefined` while the log is healthy; else why health is degraded. */
  problem(): string | undefined {
    const parts: string[] = [];
    if (this.refusedBecause !== undefined) parts.push(`writes refused: ${this.refusedBecause}`);
    const alarm = this.alarms[this.alarms.length - 1];
    if (alarm !== undefined) {
      const more = this.alarms.length > 1 ? ` (${this.alarms.length} failures since start)` : '';
      parts.push(`${alarm}${more}; health stays degraded until the controller is restarted`);
    }
    const refused = this.refusedAppends.problem();
    if (refused !== undefined) parts.push(refused);
    const unaudited = this.pending.unaudited;
    if (unaudited > 0) parts.push(`${unaudited} read or refusal record(s) not written`);
    return parts.length === 0 ? undefined : parts.join('; ');
  }

  /** The segment files on disk, oldest first (what `POST /v1/audit` reads). */
  async segmentNames(): Promise<string[]> {
    return orderAuditSegments(await readdir(this.dir));
  }

  /**
   * Appends one record durably (after the reads counted so far, so the log keeps their order;
   * refusals keep their interval); `AUDIT_UNAVAILABLE` when it cannot.
   */
  append(entry: AuditEntry): Promise<AuditHead> {
    this.pending.queueCountedReads();
    return this.enqueue(() => this.writeGroup([entry]));
  }

  /**
   * A read's record (answered, or refused after its handler ran, without an operation id):
   * counted per client and interval (reads.ts), written with the next group. Never an error: a
   * read is answered whether or not its record can be written.
   */
  countRead(entry: AuditEntry): void {
    this.pending.countRead(entry);
  }

  /**
   * A notice written with the next group, soon, without the caller waiting (health degraded).
   * Never an error.
   */
  appendRead(entry: AuditEntry): void {
    this.pending.appendRead(entry);
  }

  /** Counts a refusal that carried no operation id (written per interval, refusals.ts). */
  countRefusal(refusal: Refusal): void {
    this.pending.countRefusal(refusal);
  }

  /** Writes the reads and refusals waiting, now. */
  async flush(): Promise<void> {
    this.pending.drainCounted(false);
    if (this.pending.size === 0) return;
    await this.enqueue(() => this.writeGroup([])).catch(() => undefined);
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private unavailable(why: string): FleetError {
    this.lastWhy = why;
    return new FleetError(
      'AUDIT_UNAVAILABLE',
      `the audit log is unavailable (${why}); nothing was done`,
    );
  }

  private refuse(why: string): void {
    this.refusedBecause ??= why;
  }

  private alarm(why: string): void {
    this.alarms.push(why);
    if (this.alarms.length > 20) this.alarms.splice(0, this.alarms.length - 20);
  }

  /**
   * Writes the reads waiting and `own` as one group: one write, checked byte for byte, one fsync.
   * Returns the head after the last record.
   */
  private async writeGroup(own: readonly AuditEntry[]): Promise<AuditHead> {
    const reads = this.pending.take();
    this.lastWhy = undefined;
    try {
      if (this.refusedBecause !== undefined) throw this.unavailable(this.refusedBecause);
      const head = await this.locked(async () => {
        if (this.handle === undefined) throw this.unavailable('the log is not open');
        await this.checkUnchanged(this.handle);
        if (this.size >= this.options.segmentBytes && this.active !== null) await this.rotate();
        const refused = this.refusedAppends.entry();
        return this.writeRecords([...(refused ? [refused] : []), ...reads, ...own]);
      });
      this.refusedAppends.clear();
      return head;
    } catch (error) {
      this.pending.notWritten(reads.length);
      const why =
        error instanceof FleetError && this.lastWhy !== undefined ? this.lastWhy : reasonOf(error);
      this.refusedAppends.note(own, this.options.clock.now(), why);
      throw error;
    }
  }

  /** Runs `fn` holding the append lock; a lock that cannot be taken is `AUDIT_UNAVAILABLE`. */
  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    let inside = false;
    try {
      return await withAuditLock(this.dir, () => {
        inside = true;
        return fn();
      });
    } catch (error) {
      if (inside || error instanceof FleetError) throw error;
      const why = `the append lock could not be taken (${reasonOf(error)})`;
      this.alarm(`an audit append failed at ${this.options.clock.now().toISOString()} (${why})`);
      throw this.unavailable(why);
    }
  }

  private async writeRecords(entries: readonly AuditEntry[]): Promise<AuditHead> {
    const handle = this.handle as DurableHandle;
    const at = this.options.clock.now().toISOString();
    const { tail, bytes } = chainLines(entries, this.last, at);
    const first = entries.length > 0 && this.active === null;
    try {
      await failpoint('audit.before_append');
      const { bytesWritten } = await handle.write(bytes, 0, bytes.length, this.size);
      if (bytesWritten !== bytes.length) {
        throw new ShortWriteError(bytesWritten, bytes.length);
      }
    } catch (error) {
      const why = reasonOf(error);
      const cut = await cutBack(handle, this.size, this.last.line);
      if (cut === undefined) {
        this.alarm(
          `an audit append failed at ${at} (${why}); the partial record was cut back and the operation not done`,
        );
      } else {
        this.refuse(
          `an audit append failed at ${at} (${why}) and could not be undone: ${cut}; ${REPAIR_HINT}`,
        );
      }
      throw this.unavailable(why);
    }
    try {
      await handle.sync();
    } catch (error) {
      const why = reasonOf(error);
      const cut = await cutBack(handle, this.size, this.last.line);
      // fsyncgate: after a failed fsync nothing written before it can be trusted to be on disk.
      this.refuse(
        `fsync of the audit log failed at ${at} (${why}): the volume is suspect (catalogue 26); ${cut === undefined ? 'the record was cut back' : cut}; restart once the volume is checked`,
      );
      throw this.unavailable(why);
    }
    if (first) this.active = { firstSeq: this.last.seq + 1, firstPrev: this.last.hash };
    if (entries.some(holdsWrite)) this.activeHoldsWrites = true;
    this.size += bytes.length;
    this.last = tail;
    return this.head();
  }

  /**
   * Before each group: the file under the name must still be the one this controller appends to,
   * at the size it left it. Anything else — replaced, removed, truncated, appended by another
   * writer — refuses writes, and the head file keeps what the controller knew for the next start.
   */
  private async checkUnchanged(handle: DurableHandle): Promise<void> {
    let why: string | undefined;
    const held = await handle.stat();
    try {
      // Synchronous, as the request path's other stats (contract §14): a read, not a write the
      // power-loss recorder (fs/seam.ts) must see.
      const named = lstatSync(this.activePath);
      if (!named.isFile() || named.ino !== held.ino || named.dev !== held.dev) {
        why = `${AUDIT_ACTIVE_SEGMENT} was replaced under the controller (inode ${held.ino} → ${named.ino})`;
      }
    } catch (error) {
      why = `${AUDIT_ACTIVE_SEGMENT} was removed under the controller (${errnoOf(error) ?? 'gone'})`;
    }
    if (why === undefined && held.size > this.size) {
      why = await this.adoptReceiverRecords(handle, held.size);
    } else if (why === undefined && held.size !== this.size) {
      why = `${AUDIT_ACTIVE_SEGMENT} changed under the controller (${this.size} → ${held.size} bytes)`;
    }
    if (why === undefined) return;
    this.refuse(`${why}; writes are refused until a restart verifies the whole chain`);
    this.alarm(why);
    await writeHeadFile(this.dir, {
      seq: this.last.seq,
      sha256: this.last.hash,
      ts: this.options.clock.now().toISOString(),
      reason: why,
    }).catch(() => undefined);
    throw this.unavailable(why);
  }

  /**
   * Takes in what the SSH receiver appended since the last group (adopt.ts), under the append
   * lock; returns why not when the bytes are anything else.
   */
  private async adoptReceiverRecords(
    handle: DurableHandle,
    size: number,
  ): Promise<string | undefined> {
    const bytes = Buffer.alloc(Math.min(size - this.size, MAX_ADOPTED_BYTES + 1));
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, this.size);
    const adopted = adoptAppended(bytes.subarray(0, bytesRead), this.last);
    if (!adopted.ok || this.size + bytesRead !== size) {
      const why = adopted.ok ? 'it grew while being read' : adopted.why;
      return `${AUDIT_ACTIVE_SEGMENT} changed under the controller (${this.size} → ${size} bytes: ${why})`;
    }
    this.active ??= { firstSeq: adopted.first.seq, firstPrev: adopted.first.prev };
    if (adopted.holdsWrites) this.activeHoldsWrites = true;
    this.size = size;
    this.last = adopted.tail;
    return undefined;
  }

  /**
   * Closes the active segment (docs/audit-log.md, "Segments"): the new segment is written first as
   * `audit.jsonl.next` holding the rotation record, then the active one is renamed to its closed
   * name and `.next` into place, then segments past retention are pruned. A crash anywhere leaves
   * a state the next start finishes (segments.ts `finishRotation`).
   */
  private async rotate(): Promise<void> {
    const released = await readReleaseFile(this.dir).catch(() => undefined);
    const plan = planRotation({
      active: {
        ...(this.active as { firstSeq: number; firstPrev: string }),
        holdsWrites: this.activeHoldsWrites,
      },
      closed: this.closed,
      last: this.last,
      keepSegments: this.options.keepSegments,
      maxSegments: this.options.maxSegments,
      releasedThroughSeq: released?.throughSeq ?? 0,
      now: this.options.clock.now(),
    });
    if (plan.full !== undefined) {
      this.alarm(plan.full);
      throw this.unavailable(plan.full);
    }
    const { closing, kept, pruned, record, bytes } = plan;
    const next = join(this.dir, NEXT_SEGMENT);
    await unlink(next).catch(() => undefined);
    try {
      await createExclusive(next, bytes);
      await rename(this.activePath, join(this.dir, closing.name));
    } catch (error) {
      await unlink(next).catch(() => undefined);
      this.alarm(`an audit rotation failed (${reasonOf(error)}); nothing was done`);
      throw this.unavailable(reasonOf(error));
    }
    const old = this.handle as DurableHandle;
    try {
      await fsyncDir(this.dir, 'state directory');
      await rename(next, this.activePath);
      await fsyncDir(this.dir, 'state directory');
      this.handle = await open(this.activePath, constants.O_RDWR | constants.O_NOFOLLOW);
    } catch (error) {
      this.handle = undefined;
      this.refuse(`an audit rotation was interrupted (${reasonOf(error)}); a restart finishes it`);
      throw this.unavailable(reasonOf(error));
    } finally {
      await old.close().catch(() => undefined);
    }
    this.closed = [...kept];
    this.active = { firstSeq: record.seq, firstPrev: record.prev };
    this.activeHoldsWrites = false;
    this.size = bytes.length;
    this.last = { seq: record.seq, hash: plan.hash, line: bytes };
    this.rotations += 1;
    for (const segment of pruned) await unlink(join(this.dir, segment.name)).catch(() => undefined);
    if (pruned.length > 0) await fsyncDir(this.dir, 'state directory').catch(() => undefined);
  }

  /**
   * The final record of every operation id in the log (anything but `replayed`), as the head it
   * made: what recovery needs to tell a finished operation from an interrupted one.
   */
  async finalRecords(): Promise<Map<string, AuditHead>> {
    return readFinalRecords(this.dir, await this.segmentNames());
  }

  /** Writes what waits, records the head for the next start, and closes the file. */
  async close(): Promise<void> {
    this.pending.stop();
    await this.flush();
    await this.queue;
    if (this.writable()) {
      await writeHeadFile(this.dir, {
        ...{ seq: this.last.seq, sha256: this.last.hash },
        ts: this.options.clock.now().toISOString(),
        reason: 'closed',
      }).catch(() => undefined);
    }
    await this.handle?.close();
    this.handle = undefined;
  }
}
