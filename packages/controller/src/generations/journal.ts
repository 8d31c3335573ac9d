/**
 * The runtime journal (contract §12, catalogue 46): `~/.local/state/fleet/journal/runtime.jsonl`, one
 * JSON record per line, append-only. Each record carries a sequence number (1, 2, 3… across the
 * whole file) and a checksum (sha256 of the record's JSON without its `sum` field), and announces
 * a step that is done: it is written, and the file and its directory fsync'd, before the next step
 * starts. A transaction is bracketed:
 *
 *   begin → staged → activated → supervisor-restarted → accepted → end
 *                     (any of those) → failed → rolled-back | manual-recovery-required → end
 *   (a rollback transaction, `kind: "rollback"`, goes begin → activated without staging; a failure
 *   before anything was activated may end right after `failed`)
 *
 * Reading (pure, {@link parseJournal}): the WAL rule — a torn *last* record (no final newline: a
 * crash mid-append) is "step not done" and is dropped (and cut off before the next append); a bad
 * checksum, a sequence gap, a record out of order or anything unparsable *before* the end is
 * corruption: `RECOVERY_REQUIRED`, no automatic action.
 *
 * What a record is — its steps, their data, its checksummed line — is in journal-record.ts.
 */
import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ulid } from 'ulid';
import { FleetError } from '@fleet/core/node';
import { failpoint, type FailpointName } from '../failpoints.js';
import { appendLine, ensurePrivateDir, fsyncDir, syncHandle } from '../fs/durable.js';
import { fsFailure } from '../fs/errors.js';
import { statePaths } from '../state-paths.js';
import {
  decodeLine,
  encodeRecord,
  stepDataSchemas,
  type JournalRecord,
  type JournalStep,
  type RecordOf,
  type StepData,
  type TransactionOutcome,
} from './journal-record.js';

export const JOURNAL_FILE = 'runtime.jsonl';

export interface ParsedJournal {
  /** Every valid record, in order (up to the first corruption). */
  readonly records: readonly JournalRecord[];
  /** A torn last record that was dropped ("step not done"). */
  readonly torn: { readonly line: number; readonly bytes: number } | null;
  /** The first corrupt record: the journal cannot be trusted past it (`RECOVERY_REQUIRED`). */
  readonly corrupt: { readonly line: number; readonly reason: string } | null;
  /** Byte length of the valid prefix (what an append keeps when it cuts a torn tail). */
  readonly validBytes: number;
}

/** The last transaction of a journal, as steps. */
export interface Transaction {
  readonly id: string;
  readonly begin: RecordOf<'begin'>;
  readonly records: readonly JournalRecord[];
  readonly last: JournalRecord;
  readonly ended: boolean;
  has(step: JournalStep): boolean;
  find<S extends JournalStep>(step: S): RecordOf<S> | undefined;
}

// ---- transitions ------------------------------------------------------------------------------

/** The steps allowed after `previous` (`null`: nothing yet, or the last transaction ended). */
export function nextSteps(transaction: Transaction | null): readonly JournalStep[] {
  if (transaction === null || transaction.ended) return ['begin'];
  const kind = transaction.begin.data.kind;
  switch (transaction.last.step) {
    case 'begin':
      return kind === 'rollback' ? ['activated', 'failed'] : ['staged', 'failed'];
    case 'staged':
      return ['activated', 'failed'];
    case 'activated':
      return ['supervisor-restarted', 'failed'];
    case 'supervisor-restarted':
      return ['accepted', 'failed'];
    case 'failed':
      return transaction.has('activated')
        ? ['rolled-back', 'manual-recovery-required']
        : ['rolled-back', 'manual-recovery-required', 'end'];
    case 'accepted':
    case 'rolled-back':
    case 'manual-recovery-required':
      return ['end'];
    default:
      return ['begin'];
  }
}

/** Why `record` cannot follow `transaction`, or `null` when it can. */
export function transitionProblem(
  transaction: Transaction | null,
  record: Omit<JournalRecord, 'sum' | 'seq' | 'at' | 'v'>,
): string | null {
  const allowed = nextSteps(transaction);
  if (!allowed.includes(record.step)) {
    return `${record.step} cannot follow ${transaction && !transaction.ended ? transaction.last.step : 'an ended or empty journal'} (allowed: ${allowed.join(', ')})`;
  }
  if (record.step === 'begin') return null;
  if (!transaction || record.txn !== transaction.id)
    return `${record.step} belongs to another transaction`;
  const { target, prior } = transaction.begin.data;
  const data = record.data as Record<string, unknown>;
  if (
    (record.step === 'staged' || record.step === 'activated' || record.step === 'accepted') &&
    data['buildId'] !== target.build.sha256
  ) {
    return `${record.step} names a build that is not the transaction's target`;
  }
  if (record.step === 'rolled-back' && data['buildId'] !== prior?.build.sha256) {
    return 'rolled-back names a build that is not the prior one';
  }
  if (record.step === 'end') {
    const want: Partial<Record<JournalStep, TransactionOutcome>> = {
      accepted: 'accepted',
      'rolled-back': 'rolled-back',
      'manual-recovery-required': 'manual-recovery-required',
      failed: 'failed',
    };
    if (data['outcome'] !== want[transaction.last.step]) {
      return `end's outcome ${String(data['outcome'])} does not match the last step ${transaction.last.step}`;
    }
  }
  return null;
}

function transactionOf(records: readonly JournalRecord[]): Transaction | null {
  let start = -1;
  for (let i = records.length - 1; i >= 0; i -= 1) {
    if (records[i]?.step === 'begin') {
      start = i;
      break;
    }
  }
  if (start === -1) return null;
  const steps = records.slice(start);
  const last = steps[steps.length - 1] as JournalRecord;
  return {
    id: (steps[0] as JournalRecord).txn,
    begin: steps[0] as RecordOf<'begin'>,
    records: steps,
    last,
    ended: last.step === 'end',
    has: (step) => steps.some((r) => r.step === step),
    find: <S extends JournalStep>(step: S) => steps.find((r): r is RecordOf<S> => r.step === step),
  };
}

/** The last transaction of a parsed journal (`null` when there is none). */
export function lastTransaction(journal: ParsedJournal): Transaction | null {
  return transactionOf(journal.records);
}

// ---- parsing ----------------------------------------------------------------------------------

/** Pure: reads a journal's text (see the module comment for the rules). */
export function parseJournal(text: string): ParsedJournal {
  const records: JournalRecord[] = [];
  let validBytes = 0;
  let offset = 0;
  let line = 0;
  while (offset < text.length) {
    line += 1;
    const newline = text.indexOf('\n', offset);
    if (newline === -1) {
      // The last record has no newline: a crash mid-append. "Step not done".
      return {
        records,
        torn: { line, bytes: Buffer.byteLength(text.slice(offset)) },
        corrupt: null,
        validBytes,
      };
    }
    const content = text.slice(offset, newline);
    const bad = (reason: string): ParsedJournal => ({
      records,
      torn: null,
      corrupt: { line, reason },
      validBytes,
    });
    const { record, reason } = decodeLine(content);
    if (!record) return bad(reason ?? 'unreadable');
    const expectedSeq = (records[records.length - 1]?.seq ?? 0) + 1;
    if (record.seq !== expectedSeq) {
      return bad(
        record.seq > expectedSeq
          ? `sequence gap: ${expectedSeq} expected, ${record.seq} found`
          : `sequence ${record.seq} repeated or out of order`,
      );
    }
    const problem = transitionProblem(transactionOf(records), record);
    if (problem) return bad(problem);
    records.push(record);
    offset = newline + 1;
    validBytes += Buffer.byteLength(content) + 1;
  }
  return { records, torn: null, corrupt: null, validBytes };
}

// ---- the journal file -------------------------------------------------------------------------

/** `~/.local/state/fleet/journal/runtime.jsonl` of a node home. */
export function runtimeJournalPath(home: string): string {
  return join(statePaths(home).journal, JOURNAL_FILE);
}

/**
 * The node's runtime journal. Appends are serialised by the runtime lock (`withRuntimeLock`);
 * every append re-reads the file, refuses to write past corruption (`RECOVERY_REQUIRED`), cuts a
 * torn tail, checks the transition, writes one line, fsyncs the file and the directory, and then
 * reaches the failpoint `runtime.journal.<step>`.
 */
export class RuntimeJournal {
  readonly path: string;

  constructor(
    private readonly home: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.path = runtimeJournalPath(home);
  }

  async read(): Promise<ParsedJournal> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return parseJournal('');
      throw fsFailure(error, 'the runtime journal', 'RECOVERY_REQUIRED');
    }
    return parseJournal(text);
  }

  /** Reads the journal and throws `RECOVERY_REQUIRED` if it is corrupt. */
  async readTrusted(): Promise<ParsedJournal> {
    const journal = await this.read();
    if (journal.corrupt) throw corruptionError(journal);
    return journal;
  }

  /** Starts a transaction; returns its id. */
  async begin(data: StepData<'begin'>): Promise<string> {
    const txn = ulid();
    await this.append(txn, 'begin', data);
    return txn;
  }

  async append<S extends JournalStep>(
    txn: string,
    step: S,
    data: StepData<S>,
  ): Promise<RecordOf<S>> {
    const parsed = stepDataSchemas[step].safeParse(data);
    if (!parsed.success) throw new FleetError('INTERNAL', `runtime journal: bad ${step} data`);
    const journal = await this.readTrusted();
    const transaction = lastTransaction(journal);
    const problem = transitionProblem(transaction, { txn, step, data });
    if (problem) throw new FleetError('INTERNAL', `runtime journal: ${problem}`);
    await ensurePrivateDir(this.home, dirname(this.path));
    if (journal.torn) await this.truncate(journal.validBytes);
    const seq = (journal.records[journal.records.length - 1]?.seq ?? 0) + 1;
    const record = {
      v: 1 as const,
      seq,
      at: this.now().toISOString(),
      txn,
      step,
      data: parsed.data,
    };
    const line = encodeRecord(record);
    try {
      await appendLine(this.path, line);
    } catch (error) {
      throw fsFailure(error, 'the runtime journal');
    }
    await fsyncDir(dirname(this.path), 'journal directory');
    await failpoint(`runtime.journal.${step}` as FailpointName);
    return JSON.parse(line) as RecordOf<S>;
  }

  private async truncate(length: number): Promise<void> {
    const handle = await open(this.path, constants.O_RDWR);
    try {
      await handle.truncate(length);
      await syncHandle(handle, basename(this.path));
    } finally {
      await handle.close();
    }
  }
}

export function corruptionError(journal: ParsedJournal): FleetError {
  const where = journal.corrupt
    ? `line ${journal.corrupt.line}: ${journal.corrupt.reason}`
    : 'unreadable';
  return new FleetError(
    'RECOVERY_REQUIRED',
    `the runtime journal is corrupt (${where}); nothing was changed`,
    {
      suggestions: [
        'inspect ~/.local/state/fleet/journal/runtime.jsonl and the current pointer on the node',
        'no flip or rollback runs automatically until an operator resolves it',
      ],
    },
  );
}
