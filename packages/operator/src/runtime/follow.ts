/**
 * Following a runtime transaction from the operator's seat: the controller that answers changes
 * under the runner (old, then new, or the prior again after a rollback), so status is polled
 * through whichever answers — the controller, or the SSH recovery receiver — and a node that does
 * not answer for a while is expected.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RuntimeStatusResponse, TransactionVerdict } from '@fleet/core';

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
}

export interface Followed {
  readonly status: RuntimeStatusResponse | null;
  readonly verdict: TransactionVerdict;
}

/** Polls `readStatus` until the transaction has ended, or the timeout passes. */
export async function followTransaction(
  readStatus: () => Promise<RuntimeStatusResponse>,
  options: FollowOptions,
): Promise<Followed> {
  const { transactionVerdict } = await import('@fleet/core');
  const deadline = Date.now() + options.timeoutMs;
  let last: RuntimeStatusResponse | null = null;
  while (Date.now() < deadline) {
    try {
      const status = await readStatus();
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
      }
    } catch (error) {
      if (options.fatal?.(error)) throw error;
      // restarting: the next runtime answers shortly
    }
    await sleep(options.pollMs ?? 500);
  }
  return { status: last, verdict: { done: false } };
}

/** The error of a transaction the operator stopped following before it ended (exit 5). */
export async function unfinished(
  host: string,
  transaction: string | null,
  status: RuntimeStatusResponse | null,
  runnerLog?: string,
): Promise<Error> {
  const { FleetError } = await import('@fleet/core');
  const seen =
    status?.transaction && (transaction === null || status.transaction.id === transaction)
      ? `the last step seen was "${status.transaction.lastStep}"`
      : 'no step of it was seen';
  return new FleetError(
    'HOST_UNREACHABLE',
    `${host}: transaction ${transaction ?? '(new)'} did not end while it was followed (${seen}); the controller stopped answering — a runtime that needed manual recovery is left stopped`,
    {
      suggestions: [
        `fleet bootstrap status ${host} (through SSH when the controller stays down)`,
        ...(runnerLog ? [`the runner's log on the node: ${runnerLog}`] : []),
      ],
    },
  );
}
