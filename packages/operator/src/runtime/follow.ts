/**
 * Following a runtime transaction from the operator's seat: the controller that answers changes
 * under the runner (old, then new, or the prior again after a rollback), so status is polled
 * through whichever answers — the controller, or the SSH recovery receiver — and a node that does
 * not answer for a while is expected.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RuntimeStatusResponse, TransactionVerdict } from '@fleet/core';
import { transactionVerdict, FleetError } from '@fleet/core';

export interface FollowOptions {
  /** The transaction to follow; `null`: the newest one (a rollback opens its own). */
  readonly transaction: string | null;
  /** Gives up after this long (the runner keeps going; `fleet bootstrap status` tells). */
  readonly timeoutMs: number;
  readonly pollMs?: number;
  /** An error that ends the following at once (a changed host key); others are retried. */
  readonly fatal?: (error: unknown) => boolean;
  readonly onStatus?: (status: RuntimeStatusResponse) => void;
  /**
   * The newest transaction before the request (following `null`): only a different one, or this
   * one ending when it was open, is the request's.
   */
  readonly before?: { readonly id: string; readonly ended: boolean } | null;
  /**
   * Stop at a dead runner (issue 36, `runnerWatch`): the transaction's step count when its runner
   * was started; `null` to watch without one (the grace period then applies).
   */
  readonly runner?: { readonly steps?: number; readonly graceMs?: number };
}

export interface Followed {
  readonly status: RuntimeStatusResponse | null;
  readonly verdict: TransactionVerdict;
  /**
   * The step the transaction's runner died at (issue 36): the node answered, the transaction is
   * open, and no runner works on it. The following stopped there, not at the timeout.
   */
  readonly runnerDied?: string;
  /** Whether the node answered the last status read (false: it stopped answering). */
  readonly answered?: boolean;
}

/** How long a runner that was never seen working may take to start (its go waits 30 s). */
export const RUNNER_START_GRACE_MS = 45_000;

/**
 * Tells a dead runner from a slow one (issue 36), pure over the status answers of one following:
 * the node reports `busy` — the runtime lock's holder, or the open transaction's runner by its
 * `runner-<txn>.pid` — so an open transaction with no runner is one whose runner died. It is
 * said only once the runner has been seen working (busy, or the journal moved past the `steps`
 * it had when the runner was started) or `graceMs` passed, and only when two answers in a row
 * agree (the runner may journal `end` and release its lock between the node's two reads).
 * Returns the step it died at, or `null`.
 */
export function runnerWatch(options: {
  readonly transaction: string | null;
  /** The transaction's step count when its runner was started (activate: 2, begin and staged). */
  readonly steps?: number;
  readonly graceMs?: number;
  readonly now?: () => number;
}): (status: RuntimeStatusResponse) => string | null {
  const now = options.now ?? Date.now;
  const graceMs = options.graceMs ?? RUNNER_START_GRACE_MS;
  const since = now();
  let seenBusy = false;
  let suspect: string | null = null;
  return (status) => {
    const txn = status.transaction;
    if (
      txn === null ||
      (options.transaction !== null && txn.id !== options.transaction) ||
      txn.lastStep === 'end'
    ) {
      suspect = null;
      return null;
    }
    if (status.busy !== null) {
      seenBusy = true;
      suspect = null;
      return null;
    }
    const moved = options.steps !== undefined && txn.steps.length > options.steps;
    if (!seenBusy && !moved && now() - since < graceMs) return null;
    const key = `${txn.id}@${txn.steps.length}`;
    if (suspect === key) return txn.lastStep;
    suspect = key;
    return null;
  };
}

/** Polls `readStatus` until the transaction has ended, or the timeout passes. */
export async function followTransaction(
  readStatus: () => Promise<RuntimeStatusResponse>,
  options: FollowOptions,
): Promise<Followed> {
  const deadline = Date.now() + options.timeoutMs;
  let last: RuntimeStatusResponse | null = null;
  const watch =
    options.runner === undefined
      ? null
      : runnerWatch({ transaction: options.transaction, ...options.runner });
  let answered = false;
  while (Date.now() < deadline) {
    try {
      const status = await readStatus();
      answered = true;
      last = status;
      options.onStatus?.(status);
      const before = options.before ?? null;
      const fresh =
        before === null ||
        status.transaction?.id !== before.id ||
        (!before.ended && status.transaction.lastStep === 'end');
      if (fresh) {
        const verdict = transactionVerdict(status, options.transaction);
        if (verdict.done) return { status, verdict };
        const died = watch?.(status) ?? null;
        if (died !== null) return { status, verdict, runnerDied: died };
      }
    } catch (error) {
      if (options.fatal?.(error)) throw error;
      answered = false;
      // restarting: the next runtime answers shortly
    }
    await sleep(options.pollMs ?? 500);
  }
  return { status: last, verdict: { done: false }, answered };
}

/** What to run for an interrupted transaction, by the node's `next` (status recommends it). */
export function recoveryCommand(host: string, next: RuntimeStatusResponse['next']): string | null {
  switch (next) {
    case 'resume-acceptance':
      return `fleet upgrade ${host} --resume --confirm`;
    case 'abort':
    case 'rollback':
      return `fleet bootstrap rollback ${host} --confirm`;
    default:
      return null;
  }
}

/**
 * The error of a transaction whose runner died before it ended (issue 36): the controller
 * answered — it is not unreachable — so `RUNNER_DIED` (exit 6: the operator acts).
 */
export function runnerDiedError(
  host: string,
  transaction: string | null,
  step: string,
  status: RuntimeStatusResponse | null,
  runnerLog?: string,
): Error {
  const id = status?.transaction?.id ?? transaction ?? '(new)';
  const then = status ? recoveryCommand(host, status.next) : null;
  return new FleetError(
    'RUNNER_DIED',
    `${host}: the runner of transaction ${id} died at step "${step}"; the controller answers; run \`fleet bootstrap status ${host}\``,
    {
      suggestions: [
        ...(then ? [`then: ${then} (the node's status recommends ${status?.next})`] : []),
        ...(runnerLog ? [`the runner's log on the node: ${runnerLog}`] : []),
      ],
    },
  );
}

/**
 * The error of a transaction the operator stopped following before it ended: its runner died
 * (`runnerDied`, exit 6), else nothing answered in time (exit 5).
 */
export function unfinished(
  host: string,
  transaction: string | null,
  status: RuntimeStatusResponse | null,
  runnerLog?: string,
  runnerDied?: string,
  answered = false,
): Error {
  if (runnerDied !== undefined) {
    return runnerDiedError(host, transaction, runnerDied, status, runnerLog);
  }
  const seen =
    status?.transaction && (transaction === null || status.transaction.id === transaction)
      ? `the last step seen was "${status.transaction.lastStep}"`
      : 'no step of it was seen';
  return new FleetError(
    // It answered: not unreachable — the transaction was not seen to end (exit 6).
    answered ? 'VERIFICATION_FAILED' : 'HOST_UNREACHABLE',
    answered
      ? `${host}: transaction ${transaction ?? '(new)'} did not end while it was followed (${seen}); the controller answers and its runner${status?.busy ? ` (pid ${status.busy})` : ''} still works on it`
      : `${host}: transaction ${transaction ?? '(new)'} did not end while it was followed (${seen}); the controller stopped answering — a runtime that needed manual recovery is left stopped`,
    {
      suggestions: [
        `fleet bootstrap status ${host} (through SSH when the controller stays down)`,
        ...(runnerLog ? [`the runner's log on the node: ${runnerLog}`] : []),
      ],
    },
  );
}
