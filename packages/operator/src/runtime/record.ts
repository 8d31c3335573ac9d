/** The operator's own log of the runtime verbs it ran (contract §5: the same ids as the node's). */
import type { TransactionVerdict } from '@fleet/core';
import { recordOperatorVerb } from '@fleet/core';

export async function recordRuntimeVerb(
  verb: string,
  host: string,
  transaction: string | null,
  verdict: TransactionVerdict,
): Promise<void> {
  const error = verdict.done ? verdict.error : null;
  await recordOperatorVerb({
    verb,
    host,
    operationId: null,
    outcome: !verdict.done ? 'failed' : error ? 'failed' : 'ok',
    code: error?.code ?? (verdict.done ? null : 'HOST_UNREACHABLE'),
    ...(error ? { exitCode: error.exitCode } : {}),
    detail: `transaction ${transaction ?? '?'}: ${verdict.done ? verdict.outcome : 'not finished when the operator stopped following'}`,
  });
}
