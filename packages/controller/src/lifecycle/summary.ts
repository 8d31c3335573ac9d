/**
 * The runtime journal in one line for `fleet status` (core wire/summary.ts), pure: whether a
 * transaction is in progress or needs recovery — from the journal and the runtime lock alone, no
 * supervisor asked (the full reconciliation with observation is `runtime-status`, contract §12).
 */
import type { RuntimeSummary } from '@fleet/core/node';
import { RuntimeJournal, lastTransaction, type ParsedJournal } from '../generations/journal.js';
import { runtimeLockHolder } from '../generations/lock.js';

/**
 * The node's runtime journal summary, read now: `GET /v1/summary`'s `runtime` and drift's
 * (`POST /v1/snapshot` with `runtime: true`). An unreadable journal is one that cannot be trusted:
 * recovery, as a corrupt one.
 */
export async function readRuntimeSummary(home: string): Promise<RuntimeSummary> {
  const [journal, holder] = await Promise.all([
    new RuntimeJournal(home).read().catch((): ParsedJournal => ({
      records: [],
      torn: null,
      corrupt: { line: 0, reason: 'unreadable' },
      validBytes: 0,
    })),
    runtimeLockHolder(home),
  ]);
  return summarizeRuntime(journal, holder !== null);
}

export function summarizeRuntime(journal: ParsedJournal, busy: boolean): RuntimeSummary {
  const state = journal.corrupt
    ? 'corrupt'
    : journal.torn
      ? 'torn-tail'
      : journal.records.length === 0
        ? 'empty'
        : 'ok';
  if (journal.corrupt)
    return { journal: state, busy, attention: 'recovery-required', transaction: null };
  const txn = lastTransaction(journal);
  if (txn === null) return { journal: state, busy, attention: 'none', transaction: null };
  const manual = txn.has('manual-recovery-required');
  const outcome = txn.find('end')?.data.outcome ?? (manual ? 'manual-recovery-required' : null);
  let attention: RuntimeSummary['attention'] = 'none';
  if (manual) attention = 'recovery-required';
  else if (!txn.ended) {
    // Staged and not activated yet: its operator's `upgrade`/`bootstrap apply` is between its
    // two requests. Anything later that nobody works on is a runner that died: recovery.
    const waiting = txn.last.step === 'begin' || txn.last.step === 'staged';
    attention = busy || waiting ? 'in-progress' : 'recovery-required';
  }
  return {
    journal: state,
    busy,
    attention,
    transaction: {
      id: txn.id,
      kind: txn.begin.data.kind,
      lastStep: txn.last.step,
      at: txn.last.at,
      outcome,
    },
  };
}
