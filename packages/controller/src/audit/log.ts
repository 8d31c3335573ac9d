/**
 * The node's audit log, `~/.local/state/fleet/audit.jsonl` (0600): hash-chained JSON lines (the
 * record shape and verifier are core's `auditRecordSchema` / `verifyAuditChain`). Appends are
 * serialised, written and fsync'd before the caller answers; an append that fails is undone
 * (truncated back) and reported as `AUDIT_UNAVAILABLE`, so the caller does not do the operation.
 *
 * At open, a torn last line (a crash mid-append: no newline, or not JSON) is moved aside to
 * `audit.jsonl.torn-<ts>` — never silently dropped — and a `recovered` record is appended.
 */
import { constants } from 'node:fs';
import { readFile, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import {
  AUDIT_GENESIS,
  FleetError,
  auditLineHash,
  type AuditHead,
  type AuditRecord,
  type Clock,
} from '@fleet/core';
import { utcStamp } from '../backups.js';
import { createExclusive, fsyncDir, syncHandle } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { open } from '../fs/seam.js';
import { failpoint } from '../failpoints.js';

/** What a caller supplies; `seq`, `ts` and `prev` are the log's. */
export type AuditEntry = Omit<AuditRecord, 'seq' | 'ts' | 'prev'>;

export class AuditLog {
  private queue: Promise<unknown> = Promise.resolve();
  private broken: string | undefined;

  private constructor(
    private readonly path: string,
    private readonly handle: FileHandle,
    private readonly clock: Clock,
    private size: number,
    private last: { seq: number; hash: string },
    /** The file the torn tail was moved to at open, if there was one. */
    readonly tornMovedTo: string | undefined,
  ) {}

  static async open(path: string, clock: Clock): Promise<AuditLog> {
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') throw error;
    }
    let tornMovedTo: string | undefined;
    let keep = text.length;
    const lastNewline = text.lastIndexOf('\n', text.endsWith('\n') ? text.length - 2 : undefined);
    const lastLine = text.slice(lastNewline + 1).replace(/\n$/, '');
    if (text.length > 0 && (!text.endsWith('\n') || !isJson(lastLine))) {
      keep = lastNewline + 1;
      tornMovedTo = `${path}.torn-${utcStamp(clock.now())}`;
      for (let n = 1; ; n += 1) {
        try {
          await createExclusive(tornMovedTo, text.slice(keep));
          break;
        } catch (error) {
          if (errnoOf(error) !== 'EEXIST') throw error;
          tornMovedTo = `${path}.torn-${utcStamp(clock.now())}-${n}`;
        }
      }
    }
    const handle = await open(
      path,
      constants.O_RDWR | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
    const mode = (await handle.stat()).mode & 0o777;
    if ((mode & 0o077) !== 0 && process.platform !== 'win32') await handle.chmod(0o600);
    const bytes = Buffer.byteLength(text.slice(0, keep));
    if (tornMovedTo !== undefined) {
      await handle.truncate(bytes);
      await syncHandle(handle, 'audit log');
    }
    await fsyncDir(dirname(path), 'state directory');
    const kept = text
      .slice(0, keep)
      .split('\n')
      .filter((line) => line !== '');
    const head = kept[kept.length - 1];
    const last =
      head === undefined
        ? { seq: 0, hash: AUDIT_GENESIS }
        : { seq: seqOf(head, kept.length), hash: auditLineHash(head) };
    const log = new AuditLog(path, handle, clock, bytes, last, tornMovedTo);
    if (tornMovedTo !== undefined) {
      await log.append({
        operationId: null,
        client: null,
        operation: 'audit.recover',
        paths: [],
        files: [],
        outcome: 'recovered',
        code: null,
        detail: `a torn last line was moved aside to ${basename(tornMovedTo)}`,
      });
    }
    return log;
  }

  /** The last record's sequence number and line hash. */
  head(): AuditHead {
    return { seq: this.last.seq, sha256: this.last.hash };
  }

  /** `undefined` when appends work; else why they do not. */
  problem(): string | undefined {
    return this.broken;
  }

  /** Appends one record durably; `AUDIT_UNAVAILABLE` when it cannot. */
  append(entry: AuditEntry): Promise<AuditHead> {
    const run = this.queue.then(() => this.write(entry));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(entry: AuditEntry): Promise<AuditHead> {
    if (this.broken !== undefined) {
      throw new FleetError('AUDIT_UNAVAILABLE', `the audit log is unavailable (${this.broken})`);
    }
    const record: AuditRecord = {
      seq: this.last.seq + 1,
      ts: this.clock.now().toISOString(),
      prev: this.last.hash,
      ...entry,
    };
    const line = JSON.stringify(record);
    const bytes = Buffer.from(`${line}\n`, 'utf8');
    try {
      await failpoint('audit.before_append');
      await this.handle.write(bytes, 0, bytes.length, this.size);
      await this.handle.sync();
    } catch (error) {
      try {
        await this.handle.truncate(this.size);
        await this.handle.sync();
      } catch {
        this.broken = 'a failed append could not be undone';
      }
      throw new FleetError(
        'AUDIT_UNAVAILABLE',
        `the audit record could not be written (${errnoOf(error) ?? (error as Error).message}); nothing was done`,
        { cause: error },
      );
    }
    this.size += bytes.length;
    this.last = { seq: record.seq, hash: auditLineHash(line) };
    return this.head();
  }

  /**
   * The final record of every operation id in the log (anything but `replayed`), as the head it
   * made: what recovery needs to tell a finished operation from an interrupted one.
   */
  async finalRecords(): Promise<Map<string, AuditHead>> {
    const found = new Map<string, AuditHead>();
    const text = await readFile(this.path, 'utf8');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const record = JSON.parse(line) as Partial<AuditRecord>;
        if (typeof record.operationId === 'string' && record.outcome !== 'replayed') {
          found.set(record.operationId, { seq: Number(record.seq), sha256: auditLineHash(line) });
        }
      } catch {
        // a malformed line is the verifier's business, not recovery's
      }
    }
    return found;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.handle.close();
  }
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

function seqOf(line: string, fallback: number): number {
  try {
    const seq = (JSON.parse(line) as { seq?: unknown }).seq;
    return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : fallback;
  } catch {
    return fallback;
  }
}
