/**
 * Reading the runtime journal's history (pure): what a fresh rollback goes back to, and one line
 * per record of a transaction for the operator.
 */
import type { RuntimeExpectation } from '@fleet/core/node';
import type { JournalRecord, RecordOf } from '../generations/journal-record.js';
import type { ParsedJournal } from '../generations/journal.js';

/** The last transaction that ended `accepted`: its target runs, its prior is the way back. */
export function lastAccepted(journal: ParsedJournal): RecordOf<'begin'> | null {
  const records = journal.records;
  for (let i = records.length - 1; i >= 0; i -= 1) {
    const record = records[i] as JournalRecord;
    if (record.step === 'end' && record.data.outcome === 'accepted') {
      const begin = records.find((r) => r.txn === record.txn && r.step === 'begin');
      return (begin as RecordOf<'begin'> | undefined) ?? null;
    }
  }
  return null;
}

/** The generation a rollback returns to, with what it must report, or `null` when none is known. */
export function rollbackTarget(journal: ParsedJournal): {
  readonly from: RuntimeExpectation;
  readonly to: RuntimeExpectation;
} | null {
  const begin = lastAccepted(journal);
  if (begin === null || begin.data.prior === null) return null;
  return { from: begin.data.target, to: begin.data.prior };
}

const short = (id: unknown): string => (typeof id === 'string' ? id.slice(0, 12) : '(none)');

/** One line describing a record (for status output and receipts). */
export function describeRecord(record: JournalRecord): string {
  switch (record.step) {
    case 'begin':
      return `${record.data.kind} to ${short(record.data.target.build.sha256)} under ${record.data.supervisor} (prior ${short(record.data.prior?.build.sha256)})`;
    case 'staged':
      return `generation ${short(record.data.buildId)} staged${record.data.reused ? ' (already present, verified)' : ''}, tree ${short(record.data.treeHash)}`;
    case 'activated':
      return `current -> ${short(record.data.buildId)} (was ${short(record.data.previous)})`;
    case 'supervisor-restarted':
      return `${record.data.supervisor} restarted the runtime (pid ${record.data.pid ?? '?'})`;
    case 'accepted':
      return `${short(record.data.buildId)} accepted`;
    case 'failed': {
      // The runner's acceptance message already lists its criteria: said once (issue 35).
      const { criteria, message } = record.data;
      const unsaid = criteria.filter((criterion) => !message.includes(criterion));
      return `failed during ${record.data.during}: ${record.data.code}: ${message}${unsaid.length ? ` [${unsaid.join('; ')}]` : ''}`;
    }
    case 'rolled-back':
      return `rolled back to ${short(record.data.buildId)}, which passed acceptance`;
    case 'manual-recovery-required':
      // Shown after the step name ("manual-recovery-required: NO_PRIOR_GENERATION: …"), and
      // prefixed "manual recovery required:" by the operator's verdict: saying it here too
      // printed it twice (issue 35 item 3).
      return record.data.reason;
    case 'end':
      return `${record.data.outcome}`; // shown after the step name: "end: accepted"
  }
}

/** The last steps of an interrupted transaction `resume` closes (the target was activated). */
export const RESUMABLE: ReadonlySet<string> = new Set([
  'activated',
  'supervisor-restarted',
  'accepted',
]);
