/**
 * Settles, at the controller's start, an install that was answered before a coupled restart of
 * this very controller (core `PendingRestart`; the transport-identity domain, contract §10.2): its
 * journal holds `pending` with the `--node-id` the restarted controller must run with.
 *
 * - This controller runs with that id: the restart happened as planned. The operation is
 *   completed, its pending actions `ok`, the receipt verified (the operator still checks the
 *   identity endpoint for itself).
 * - It runs with another id (the supervisor could not start the new controller and the restart
 *   was rolled back to the previous flag, or someone restarted it by hand): every file the
 *   operation wrote is put back from its backup — through the writer's own `restore`, before the
 *   controller serves anything — and the operation is reported rolled back (`VERIFICATION_FAILED`,
 *   exit 6), or `RECOVERY_REQUIRED` when a file could not be put back.
 *
 * Either way one more audit record (the settlement) follows the one written when the install
 * answered, and the journal is dropped.
 */
import type { ActionOutcome, Receipt } from '@fleet/core/node';
import { withAudit } from './handlers/receipt.js';
import { readLive, sha256Hex, targetOf } from './fs/safe-path.js';
import { PathLocks } from './locks.js';
import type { JournalEvent } from './operations.js';
import type { RecoveryInput } from './recovery-input.js';
import { managedTarget } from './fs/managed-target.js';
import { OperationWriter } from './writer.js';

type Begin = Extract<JournalEvent, { event: 'begin' }>;
type Pending = Extract<JournalEvent, { event: 'pending' }>;
type UnauditedReceipt = Omit<Receipt, 'audit'>;

export interface PendingOperation {
  readonly id: string;
  readonly begin: Begin;
  readonly events: readonly JournalEvent[];
  readonly pending: Pending;
  /** The receipt answered before the restart (pending actions, not verified). */
  readonly template: UnauditedReceipt | Receipt;
}

function unaudited(receipt: UnauditedReceipt | Receipt): UnauditedReceipt {
  const { audit: _audit, ...rest } = receipt as Receipt;
  return rest;
}

/** Puts back every file the operation renamed into place; the paths restored and those that failed. */
async function restoreWritten(
  input: RecoveryInput,
  operation: PendingOperation,
): Promise<{ restored: string[]; failed: string[] }> {
  const { home, maxFileBytes } = input;
  const writer = new OperationWriter({
    home,
    state: input.state,
    operationId: operation.id,
    domain: operation.begin.domain ?? '',
    allowlist: input.allowlist,
    locks: new PathLocks(),
    operations: input.operations,
    clock: { now: input.now, monotonicMs: () => performance.now() },
    fileLimit: maxFileBytes,
    beforeCommit: () => Promise.resolve(),
  });
  const renamed = new Set(operation.events.flatMap((e) => (e.event === 'renamed' ? [e.path] : [])));
  const alreadyRestored = new Set(
    operation.events.flatMap((e) => (e.event === 'restored' ? [e.path] : [])),
  );
  const restored: string[] = [];
  const failed: string[] = [];
  const writes = operation.events.filter(
    (e): e is Extract<JournalEvent, { event: 'write' }> =>
      e.event === 'write' && renamed.has(e.path) && !alreadyRestored.has(e.path),
  );
  for (const write of [...writes].reverse()) {
    try {
      let before: Buffer | null = null;
      if (write.beforeSha256 !== null) {
        const backup =
          write.backupPath === null
            ? null
            : await readLive(home, targetOf(home, write.backupPath), maxFileBytes);
        if (backup === null || sha256Hex(backup.bytes) !== write.beforeSha256) {
          throw new Error(`its backup ${write.backupPath ?? '(none)'} is missing or changed`);
        }
        before = backup.bytes;
      }
      const live = await readLive(
        home,
        await managedTarget(home, write.path, input.allowlist.symlinkDirs),
        maxFileBytes,
      );
      const result = {
        path: write.path,
        beforeSha256: write.beforeSha256,
        afterSha256: write.afterSha256,
        backupPath: write.backupPath,
        unchanged: false,
      };
      writer.written.push({
        fileId: input.allowlist.require(write.path).fileId,
        result,
        before,
        after: live?.bytes ?? new Uint8Array(),
        mode: (live?.mode ?? 0o600) & 0o777,
        hardlinkBroken: false,
        restored: false,
      });
      await writer.restore(result);
      restored.push(write.path);
    } catch (error) {
      failed.push(`${write.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { restored, failed };
}

/** How a pending operation is settled: its receipt, the audit outcome and the detail both say. */
export interface Settlement {
  readonly receipt: UnauditedReceipt;
  readonly outcome: 'ok' | 'rolled-back' | 'failed';
  readonly detail: string;
}

/** The receipt's pending actions given `status`, their detail extended by `detail`, pure. */
function settledActions(
  template: UnauditedReceipt,
  status: ActionOutcome['status'],
  detail: string,
): ActionOutcome[] {
  return template.actions.map((action) =>
    action.status === 'pending'
      ? { ...action, status, detail: `${action.detail}; ${detail}` }
      : action,
  );
}

/** The restart happened as planned: the pending actions are done, the receipt verified. Pure. */
export function verifiedSettlement(
  template: UnauditedReceipt,
  nodeId: string,
  finishedAt: string,
): Settlement {
  const detail = `restart settled: the restarted controller runs with --node-id ${nodeId}, as expected`;
  const receipt = {
    ...template,
    host: nodeId,
    actions: settledActions(
      template,
      'ok',
      `done: the restarted controller runs with --node-id ${nodeId}`,
    ),
    verified: true,
    finishedAt,
  };
  return { receipt, outcome: 'ok', detail };
}

/**
 * The controller came back with another node id: the files `restored` are back from their
 * backups, those `failed` could not be (then `RECOVERY_REQUIRED`, else `VERIFICATION_FAILED`).
 * Pure.
 */
export function rolledBackSettlement(
  template: UnauditedReceipt,
  ids: { readonly nodeId: string; readonly expected: string },
  restore: { readonly restored: readonly string[]; readonly failed: readonly string[] },
  finishedAt: string,
): Settlement {
  const { nodeId, expected } = ids;
  const { restored, failed } = restore;
  const why = `the controller did not come back with --node-id ${expected}: it runs with --node-id ${nodeId} (the restart failed and was rolled back, or it was restarted by hand)`;
  const detail =
    failed.length === 0
      ? `${why}; ${restored.length} written file(s) restored from backup`
      : `${why}; and ${failed.join('; ')} could not be restored: manual recovery required`;
  const receipt: UnauditedReceipt = {
    ...template,
    host: nodeId,
    outcome: 'rolled-back',
    files: template.files.map((file) =>
      restored.includes(file.path) ? { ...file, state: 'restored' as const } : file,
    ),
    actions: [
      ...settledActions(
        template,
        'failed',
        `not settled: the controller runs with --node-id ${nodeId}`,
      ),
      {
        kind: 'restore',
        status: failed.length === 0 ? 'ok' : 'failed',
        detail:
          failed.length === 0
            ? 'every written file was restored from its backup'
            : `not restored: ${failed.join('; ')}`,
      },
    ],
    verified: false,
    error: {
      code: failed.length === 0 ? 'VERIFICATION_FAILED' : 'RECOVERY_REQUIRED',
      message: detail,
    },
    finishedAt,
  };
  return { receipt, outcome: failed.length === 0 ? 'rolled-back' : 'failed', detail };
}

export async function settlePending(
  input: RecoveryInput,
  operation: PendingOperation,
): Promise<void> {
  const nodeId = input.nodeId as string;
  const expected = operation.pending.expect.nodeId;
  const template = unaudited(operation.template);
  const finishedAt = input.now().toISOString();
  const settlement =
    nodeId === expected
      ? verifiedSettlement(template, nodeId, finishedAt)
      : rolledBackSettlement(
          template,
          { nodeId, expected },
          await restoreWritten(input, operation),
          finishedAt,
        );
  await recordSettlement(input, operation, settlement, finishedAt);
}

/** The settlement's audit record (after the one written when the install answered), then its status. */
async function recordSettlement(
  input: RecoveryInput,
  operation: PendingOperation,
  { receipt, outcome, detail }: Settlement,
  finishedAt: string,
): Promise<void> {
  const { id, begin } = operation;
  const head = await input.audit.append({
    operationId: id,
    client: begin.client,
    operation: begin.operation,
    paths: [...begin.paths],
    files: receipt.files.map((file) => ({
      path: file.path,
      beforeSha256: file.beforeSha256,
      afterSha256: file.afterSha256,
      backupPath: file.backupPath,
    })),
    outcome,
    code: receipt.error?.code ?? null,
    detail,
    // The commit the original request named, kept in its journaled receipt (contract §8.4).
    ...(receipt.repoCommit === undefined ? {} : { repoCommit: receipt.repoCommit }),
  });
  await input.operations.finish({
    operationId: id,
    operation: begin.operation,
    state: outcome === 'ok' ? 'completed' : 'failed',
    startedAt: begin.startedAt,
    finishedAt,
    receipt: withAudit(receipt, head),
    requestSha256: begin.requestSha256 ?? '0'.repeat(64),
    client: begin.client,
    httpStatus: 200,
  });
}

/**
 * Settles, once this controller accepts requests, the operations recovery left for it (their
 * `expect` is this controller's `--node-id`). A failure is reported, never thrown: the controller
 * keeps serving and the operation stays pending (its status says `in-progress`).
 */
export async function settleAfterStart(
  input: RecoveryInput,
  ids: readonly string[],
): Promise<void> {
  for (const id of ids) {
    try {
      const events = (await input.operations.readJournal(id)) ?? [];
      const begin = events.find((e): e is Begin => e.event === 'begin');
      const pending = events.find((e): e is Pending => e.event === 'pending');
      const outcome = events.find(
        (e): e is Extract<JournalEvent, { event: 'outcome' }> => e.event === 'outcome',
      );
      const template = outcome?.receipt ?? (await input.operations.get(id))?.receipt;
      if (!begin || !pending || !template) continue;
      await settlePending(input, { id, begin, events, pending, template });
    } catch (error) {
      process.stderr.write(
        `controller: operation ${id} could not be settled: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    }
  }
}
