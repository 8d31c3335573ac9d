/**
 * The runtime journal's word on drift and version (issue 36 item 4), pure: a runtime that failed
 * acceptance, or whose transaction is open, is never `current` whatever version it reports.
 */
import type { VersionItem } from '../report/version-report.js';
import type { RuntimeSummary } from '../wire/summary.js';

/**
 * Why a host's runtime is not current whatever version it reports (issue 36 item 4): its runtime
 * journal (`GET /v1/summary`'s `runtime`) has a transaction open — in progress, or interrupted
 * with nobody working on it — or one that ended in manual recovery, or is corrupt. A runtime that
 * failed acceptance is never `current`. `null` when the journal has nothing open. Pure.
 */
export function runtimeJournalProblem(
  host: string,
  runtime: RuntimeSummary | null | undefined,
): string | null {
  if (!runtime || runtime.attention === 'none') return null;
  const txn = runtime.transaction;
  if (txn === null) {
    return `the runtime journal is ${runtime.journal}: recovery required (fleet bootstrap status ${host})`;
  }
  const which = `runtime transaction ${txn.id} (${txn.kind})`;
  if (runtime.attention === 'in-progress') {
    return `${which} is in progress at "${txn.lastStep}": not accepted yet`;
  }
  return txn.outcome === 'manual-recovery-required'
    ? `${which} ended in manual recovery: not accepted (fleet bootstrap status ${host})`
    : txn.lastStep === 'failed'
      ? `${which} failed and was interrupted before its rollback: not accepted, recovery required (fleet bootstrap status ${host})`
      : `${which} was interrupted at "${txn.lastStep}": not accepted, recovery required (fleet bootstrap status ${host})`;
}

/**
 * The runtime item with the journal's word (pure): a `current` runtime with a transaction open
 * or needing recovery is `stale`, the reason first; any other state keeps its own, the reason
 * added.
 */
export function withJournal(item: VersionItem, problem: string | null): VersionItem {
  if (problem === null) return item;
  return {
    ...item,
    state: item.state === 'current' ? 'stale' : item.state,
    detail: item.detail ? `${problem}; ${item.detail}` : problem,
  };
}
