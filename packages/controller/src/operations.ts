/**
 * Operation ids are single-use (contract §15). Each operation that changes or captures something has:
 * - an intent journal, `journal/<id>.jsonl`, created exclusively before anything is touched and
 *   appended (fsync'd) at every step of a write — so the next start can sweep what a crash left
 *   and tell whether each file is wholly old or wholly new;
 * - once finished, a record, `operations/<id>.json`, holding its outcome (receipt or error): a
 *   replayed id is answered from it and never executed again, and `GET /v1/operations/<id>`
 *   reports it to a client that lost its connection.
 */
import { readFile, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeTime } from 'ulid';
import * as z from '@fleet/core/zod';
import {
  FleetError,
  errorBodySchema,
  operationIdSchema,
  operationStatusResponseSchema,
  receiptSchema,
  sha256Schema,
  timestampSchema,
  type OperationStatusResponse,
  type Receipt,
  type WireErrorBody,
} from '@fleet/core/node';
import {
  appendLine,
  createExclusive,
  ensurePrivateDir,
  removeDurable,
  writeFileAtomic,
} from './fs/durable.js';
import { errnoOf, fsFailure } from './fs/errors.js';
import type { StatePaths } from './state-paths.js';

export type JournalEvent =
  | {
      readonly event: 'begin';
      readonly operationId: string;
      readonly operation: 'install' | 'capture';
      readonly domain: string | null;
      readonly client: string | null;
      readonly paths: readonly string[];
      readonly startedAt: string;
      /** sha256 of the request, so a replay after recovery is recognised as the same request. */
      readonly requestSha256?: string;
    }
  | {
      readonly event: 'write';
      readonly path: string;
      readonly beforeSha256: string | null;
      readonly afterSha256: string;
      readonly backupPath: string | null;
    }
  | { readonly event: 'renamed'; readonly path: string }
  | { readonly event: 'restored'; readonly path: string }
  | {
      /**
       * A coupled action replaces this controller (core `PendingRestart`): answered before it
       * ran, settled by the next controller's start from `expect` (recovery.ts).
       */
      readonly event: 'pending';
      readonly expect: { readonly nodeId: string };
      /** The `--node-id` of the controller that answered. */
      readonly previousNodeId: string;
      readonly detail: string;
    }
  | {
      /** The answer, journaled before the audit append (recovery completes the record from it). */
      readonly event: 'outcome';
      readonly state: 'completed' | 'failed';
      readonly httpStatus: number;
      readonly finishedAt: string;
      readonly receipt?: Omit<Receipt, 'audit'>;
      readonly error?: WireErrorBody['error'];
    };

/** One journal line, checked as it is read back (a line that does not match is corruption). */
const journalEventSchema = z.discriminatedUnion('event', [
  z.strictObject({
    event: z.literal('begin'),
    operationId: operationIdSchema,
    operation: z.enum(['install', 'capture']),
    domain: z.string().nullable(),
    client: z.string().nullable(),
    paths: z.array(z.string()),
    startedAt: timestampSchema,
    requestSha256: sha256Schema.optional(),
  }),
  z.strictObject({
    event: z.literal('write'),
    path: z.string(),
    beforeSha256: sha256Schema.nullable(),
    afterSha256: sha256Schema,
    backupPath: z.string().nullable(),
  }),
  z.strictObject({ event: z.literal('renamed'), path: z.string() }),
  z.strictObject({ event: z.literal('restored'), path: z.string() }),
  z.strictObject({
    event: z.literal('pending'),
    expect: z.strictObject({ nodeId: z.string() }),
    previousNodeId: z.string(),
    detail: z.string(),
  }),
  z.strictObject({
    event: z.literal('outcome'),
    state: z.enum(['completed', 'failed']),
    httpStatus: z.number().int(),
    finishedAt: timestampSchema,
    receipt: receiptSchema.omit({ audit: true }).optional(),
    error: errorBodySchema.shape.error.optional(),
  }),
]);

/**
 * Reads an install journal back (pure; the SQLite WAL rule of catalogue 46 applied to it): a last
 * line without its newline is a crash mid-append — that step was not done, and it is dropped —
 * while any complete line that does not parse as a journal event means the journal cannot be
 * trusted past it: `RECOVERY_REQUIRED` for that operation, naming the line, nothing guessed.
 */
export function parseOperationJournal(text: string, id: string): JournalEvent[] {
  const lines = text.split('\n');
  lines.pop(); // after the last newline: '' for a whole file, else a torn last line
  return lines.map((line, index) => {
    let parsed;
    try {
      parsed = journalEventSchema.safeParse(JSON.parse(line));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) {
      throw new FleetError(
        'RECOVERY_REQUIRED',
        `the journal of operation ${id} is unreadable at line ${index + 1} of ${lines.length} (${parsed ? 'not a journal event' : 'not JSON'}); it is not recovered automatically: compare its files with their backups, then move journal/${id}.jsonl aside`,
      );
    }
    return parsed.data;
  });
}

const recordSchema = operationStatusResponseSchema.extend({
  requestSha256: sha256Schema,
  client: z.string().nullable(),
  httpStatus: z.number().int(),
});

/** A finished operation, as stored: its status response plus what replay needs. */
export type OperationRecord = OperationStatusResponse & {
  readonly requestSha256: string;
  readonly client: string | null;
  /** The HTTP status the original answer had (a replay answers the same). */
  readonly httpStatus: number;
};

const ID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export class OperationStore {
  /** Operations running in this process, by id. */
  readonly inflight = new Map<string, { operation: 'install' | 'capture'; startedAt: string }>();

  constructor(private readonly paths: StatePaths) {}

  async init(): Promise<void> {
    await ensurePrivateDir(this.paths.home, this.paths.journal);
    await ensurePrivateDir(this.paths.home, this.paths.operations);
  }

  private journalPath(id: string): string {
    return join(this.paths.journal, `${id}.jsonl`);
  }

  private recordPath(id: string): string {
    return join(this.paths.operations, `${id}.json`);
  }

  /** Claims the id durably; `REPLAY_REJECTED` when it is already in use. */
  async begin(event: Extract<JournalEvent, { event: 'begin' }>): Promise<void> {
    // Walked again per operation: a directory swapped for a link since the start is refused.
    await ensurePrivateDir(this.paths.home, this.paths.journal);
    try {
      await createExclusive(this.journalPath(event.operationId), `${JSON.stringify(event)}\n`);
    } catch (error) {
      if (errnoOf(error) === 'EEXIST') {
        throw new FleetError(
          'REPLAY_REJECTED',
          `operation ${event.operationId} is already in progress`,
        );
      }
      throw fsFailure(error, 'operation journal');
    }
  }

  async note(id: string, event: JournalEvent): Promise<void> {
    await appendLine(this.journalPath(id), JSON.stringify(event)).catch((error: unknown) => {
      throw fsFailure(error, 'operation journal');
    });
  }

  /** Stores the outcome durably; then the journal is no longer needed. */
  async finish(record: OperationRecord, options: { keepJournal?: boolean } = {}): Promise<void> {
    await ensurePrivateDir(this.paths.home, this.paths.operations);
    await writeFileAtomic(this.recordPath(record.operationId), `${JSON.stringify(record)}\n`);
    if (!options.keepJournal) await this.dropJournal(record.operationId);
  }

  async dropJournal(id: string): Promise<void> {
    await removeDurable(this.journalPath(id));
  }

  async get(id: string): Promise<OperationRecord | undefined> {
    let text: string;
    try {
      text = await readFile(this.recordPath(id), 'utf8');
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return undefined;
      throw error;
    }
    const parsed = recordSchema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new FleetError('RECOVERY_REQUIRED', `the record of operation ${id} is unreadable`);
    }
    return parsed.data;
  }

  async journalExists(id: string): Promise<boolean> {
    return (await this.readJournal(id)) !== undefined;
  }

  /** Ids of journals left behind (operations a crash interrupted). */
  async pending(): Promise<string[]> {
    const names = await readdir(this.paths.journal).catch(() => [] as string[]);
    return names
      .filter((name) => name.endsWith('.jsonl') && ID.test(name.slice(0, -6)))
      .map((name) => name.slice(0, -6))
      .sort();
  }

  /**
   * A journal's events ({@link parseOperationJournal}): a torn last line is "step not done", an
   * unreadable line before it is `RECOVERY_REQUIRED`.
   */
  async readJournal(id: string): Promise<JournalEvent[] | undefined> {
    let text: string;
    try {
      text = await readFile(this.journalPath(id), 'utf8');
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return undefined;
      throw error;
    }
    return parseOperationJournal(text, id);
  }

  /** Moves an unreadable journal aside (`<id>.jsonl.unreadable`): kept for the operator, not re-read. */
  async setJournalAside(id: string): Promise<string> {
    const aside = `${this.journalPath(id)}.unreadable`;
    await rename(this.journalPath(id), aside);
    return aside;
  }

  /** Removes records whose id (a ULID: its first 10 characters are the time) is older than `before`. */
  async prune(before: Date): Promise<number> {
    const names = await readdir(this.paths.operations).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      const id = name.slice(0, -5);
      if (!name.endsWith('.json') || !ID.test(id)) continue;
      if (ulidTime(id) < before.getTime()) {
        await removeDurable(this.recordPath(id));
        removed += 1;
      }
    }
    return removed;
  }
}

/** The millisecond timestamp a ULID carries. */
export function ulidTime(id: string): number {
  return decodeTime(id);
}
