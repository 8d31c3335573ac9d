/**
 * Undoing an install's writes (contract §8.4; catalogue 25): a failed installer's files restored
 * (rolled back), the writes of an operation whose outcome could not be journaled or whose audit
 * record could not be appended undone — the operation is then not done. A file that cannot be
 * restored is `RECOVERY_REQUIRED`.
 */
import { FleetError, type InstallRequest, type SecretValues } from '@fleet/core/node';
import { errorBody, toWireError, type WireError } from '../http/respond.js';
import { redactorFor, type ControllerRuntime } from '../runtime.js';
import type { Principal } from '../tokens/auth.js';
import type { OperationWriter } from '../writer.js';
import type { HandlerResult } from './types.js';

/** A failed install's writes restored: rolled back, or the error that a restore failed. */
export async function undoFailure(
  writer: OperationWriter,
  failure: WireError | undefined,
): Promise<{ readonly failure: WireError | undefined; readonly rolledBack: boolean }> {
  if (failure === undefined) return { failure, rolledBack: false };
  const restored = await restoreAll(writer);
  if (restored !== undefined) return { failure: restored, rolledBack: false };
  return { failure, rolledBack: writer.written.some((w) => w.restored) };
}

/**
 * The answer could not be journaled (disk full: catalogue 25), so a crash could not complete it:
 * the operation is not done. Its writes are undone and the journal's failure is what is answered
 * (or `RECOVERY_REQUIRED` when a write cannot be undone).
 */
export async function undoFor(writer: OperationWriter, error: unknown): Promise<never> {
  const undone = await restoreAll(writer);
  throw undone === undefined ? error : new FleetError(undone.code, undone.message);
}

/** Restores every written file; `undefined` when all went back, else the error to answer. */
async function restoreAll(writer: OperationWriter): Promise<WireError | undefined> {
  const failed: string[] = [];
  for (const written of writer.unrestored()) {
    try {
      await writer.restore(written.result);
    } catch (error) {
      failed.push(`${written.result.path}: ${(error as Error).message}`);
    }
  }
  if (failed.length === 0) return undefined;
  return toWireError(
    new FleetError(
      'RECOVERY_REQUIRED',
      `the install failed and could not be undone: ${failed.join('; ')}`,
    ),
  );
}

/** The audit append failed: the operation is not done — undo the writes, answer 503. */
export async function auditFailed(
  runtime: ControllerRuntime,
  principal: Principal,
  writer: OperationWriter,
  request: InstallRequest,
  requestSha256: string,
  startedAt: string,
  error: unknown,
  secrets: SecretValues | undefined,
): Promise<HandlerResult> {
  const failure = (await restoreAll(writer)) ?? toWireError(error);
  const body = errorBody(failure, redactorFor(runtime, secrets));
  await runtime.operations.finish({
    operationId: request.operationId,
    operation: 'install',
    state: 'failed',
    startedAt,
    finishedAt: runtime.clock.now().toISOString(),
    error: body.error,
    requestSha256,
    client: principal.id,
    httpStatus: failure.status,
  });
  return { status: failure.status, body, audited: true };
}
