/**
 * An install's last steps (contract §8.4), node side: its outcome journaled (a pending restart
 * first), then, once its audit record is written, the operation's record stored, the backups
 * pruned after a completed install, the answer; and, after the operation, the secret memory
 * reconciled with the files it touched (docs/secrets.md).
 */
import { basename, join } from 'node:path';
import type { AuditHead, InstallRequest, NodeInstallResult } from '@fleet/core/node';
import { pruneBackups } from '../backups.js';
import type { errorBody } from '../http/respond.js';
import type { OperationRecord } from '../operations.js';
import type { ControllerRuntime } from '../runtime.js';
import { STATE_DIR } from '../state-paths.js';
import type { Principal } from '../tokens/auth.js';
import type { OperationWriter } from '../writer.js';
import type { InstallAnswer } from './install-answer.js';
import { undoFor } from './install-undo.js';
import { withAudit, type UnauditedReceipt } from './receipt.js';
import type { HandlerResult } from './types.js';

/** Journals a pending restart (if any) and the outcome; a journal that cannot be written undoes the writes. */
export async function journalOutcome(
  runtime: ControllerRuntime,
  writer: OperationWriter,
  outcome: {
    readonly id: string;
    readonly pending: NodeInstallResult['pending'];
    readonly state: 'completed' | 'failed';
    readonly httpStatus: number;
    readonly finishedAt: string;
    readonly receipt: UnauditedReceipt | undefined;
    readonly redactedError: ReturnType<typeof errorBody>['error'] | undefined;
  },
): Promise<void> {
  const { id, pending, receipt, redactedError } = outcome;
  if (pending !== undefined) {
    await runtime.operations
      .note(id, {
        event: 'pending',
        expect: { nodeId: pending.expect.nodeId },
        previousNodeId: runtime.nodeId,
        detail: pending.detail,
      })
      .catch((error: unknown) => undoFor(writer, error));
  }
  await runtime.operations
    .note(id, {
      event: 'outcome',
      state: outcome.state,
      httpStatus: outcome.httpStatus,
      finishedAt: outcome.finishedAt,
      ...(receipt ? { receipt } : {}),
      ...(redactedError && !receipt ? { error: redactedError } : {}),
    })
    .catch((error: unknown) => undoFor(writer, error));
}

/**
 * The operation's last step, once its audit record is written: the record stored, the backups
 * pruned after a completed install, the answer (and a coupled restart to run after it).
 */
export async function finishInstall(
  runtime: ControllerRuntime,
  principal: Principal,
  request: InstallRequest,
  writer: OperationWriter,
  touched: Set<string>,
  outcome: InstallAnswer & {
    readonly requestSha256: string;
    readonly startedAt: string;
    readonly head: AuditHead;
  },
): Promise<HandlerResult> {
  const { pending, receipt, rolledBack, redactedError, answeredError, httpStatus, head } = outcome;
  const record: OperationRecord = {
    operationId: request.operationId,
    operation: 'install',
    state: pending ? 'in-progress' : receipt && !rolledBack ? 'completed' : 'failed',
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    ...(receipt ? { receipt: withAudit(receipt, head) } : {}),
    ...(redactedError && !receipt ? { error: redactedError } : {}),
    requestSha256: outcome.requestSha256,
    client: principal.id,
    httpStatus,
  };
  // A pending operation keeps its journal (and its backups unpruned) until it is settled. The
  // audit record is written, so the operation is done: a record that cannot be stored (disk full,
  // catalogue 25) does not change the answer or add a second audit record. The journal, which
  // holds the outcome, stays: the next start completes the record from it (recovery.ts), and
  // until then the id is refused as interrupted, never run twice.
  await runtime.operations
    .finish(record, { keepJournal: pending !== undefined })
    .catch(() => undefined);
  if (receipt && !rolledBack && !pending) {
    for (const pruned of await prune(runtime, request.domain, writer)) touched.add(pruned);
  }
  return {
    status: httpStatus,
    body: record.receipt ?? { error: answeredError },
    audited: true,
    ...(pending ? { afterResponse: () => pending.start() } : {}),
  };
}

/** Prunes each written file's backups to its domain's count; returns the `~/` paths removed. */
async function prune(
  runtime: ControllerRuntime,
  domain: string,
  writer: OperationWriter,
): Promise<string[]> {
  const removed: string[] = [];
  for (const written of writer.written) {
    if (written.result.backupPath === null) continue;
    const entry = runtime.allowlist.require(written.result.path);
    const names = await pruneBackups(
      runtime.home,
      join(runtime.state.backups, domain),
      written.fileId,
      entry.backups,
      basename(written.result.backupPath),
    ).catch(() => [] as string[]);
    removed.push(...names.map((name) => `~/${STATE_DIR}/backups/${domain}/${name}`));
  }
  return removed;
}

/**
 * After an operation, the secret memory re-reads what it touched (docs/secrets.md): a value no
 * file holds any more is forgotten. Best effort — a failure keeps values remembered (safe side).
 */
export async function forgetReleased(
  runtime: ControllerRuntime,
  touched: Set<string>,
): Promise<void> {
  const chain = await runtime.secrets().catch(() => new Map<string, string>());
  await runtime.secretMemory.reconcile(touched, chain).catch((error: unknown) => {
    process.stderr.write(
      `controller: the secret memory was not reconciled: ${(error as Error)?.message ?? String(error)}\n`,
    );
  });
}
