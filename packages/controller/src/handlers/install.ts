/**
 * `POST /v1/install` (contract §8.4): the node half of an install. The controller validates the
 * request against the node policy (contract §5.1: the domain is served, every path is declared or
 * listed, every action id is defined, no unattended install the policy does not allow — a
 * process-coupled domain never) before anything is written, takes the per-path locks, claims the
 * operation id (journal),
 * checks every file's live sha256 and every secret before anything is written, then hands the
 * domain's installer a `SafeFileWriter`. A failure after a write restores what was written and
 * answers a `rolled-back` receipt. The audit record is appended (fsync'd) before the answer; if it
 * cannot be, the writes are undone and the answer is `AUDIT_UNAVAILABLE`.
 *
 * A replayed id is answered from the stored record of the original: never executed twice.
 *
 * The request's `repoCommit` — the fleet repository commit the content was rendered from, a full
 * commit id by the request's schema — is written into the receipt and the audit record (contract
 * §8.4, issue 36), only when the request carried it: an operator that predates the field never
 * gets a receipt key its strict schema would refuse. Likewise an error answer carries the refused
 * action's output tail (`error.toolOutput`) only when the request's `toolOutput` asked for it.
 *
 * This module holds the handler, the order of the operation's steps and the replay; the steps are
 * its siblings': install-checks.ts (the policy), install-run.ts (the installer through the
 * operation's writer), install-undo.ts (restoring the writes), install-answer.ts (the receipt and
 * the audit record) and install-finish.ts (the journal, the stored record, the pruned backups).
 */
import { FleetError, type AuditHead, type InstallRequest } from '@fleet/core/node';
import { sha256Hex } from '../fs/safe-path.js';
import type { OperationRecord } from '../operations.js';
import { redactorFor, type ControllerRuntime } from '../runtime.js';
import type { Principal } from '../tokens/auth.js';
import { answerOf, appendInstallAudit } from './install-answer.js';
import { validate } from './install-checks.js';
import { finishInstall, forgetReleased, journalOutcome } from './install-finish.js';
import { operationWriter, runInstaller, type SecretsHolder } from './install-run.js';
import { auditFailed, undoFailure } from './install-undo.js';
import { checkFresh, claimRefused } from './replay.js';
import type { Handler, HandlerResult } from './types.js';

export const install: Handler = async ({ runtime, principal, body }) => {
  const request = body as InstallRequest;
  const id = request.operationId;
  const { inflight } = runtime.operations;
  // Claimed synchronously: a concurrent request with the same id cannot get past this line.
  if (inflight.has(id))
    throw new FleetError('REPLAY_REJECTED', `operation ${id} is already in progress`);
  const startedAt = runtime.clock.now().toISOString();
  inflight.set(id, { operation: 'install', startedAt });
  try {
    const requestSha256 = sha256Hex(Buffer.from(JSON.stringify(request)));
    const previous = await runtime.operations.get(id);
    if (previous) return await replay(runtime, principal, previous, requestSha256);
    if (await runtime.operations.journalExists(id)) {
      throw new FleetError('REPLAY_REJECTED', `operation ${id} was interrupted; see its status`);
    }
    let paths: string[];
    try {
      checkFresh(runtime, id);
      paths = validate(runtime, request);
      runtime.locks.acquire(paths, id);
    } catch (error) {
      const claim = { operationId: id, operation: 'install' as const, requestSha256, startedAt };
      await claimRefused(runtime, { ...claim, client: principal.id }, error);
      throw error;
    }
    // A restart pending after the answer keeps the paths locked: the next controller settles them.
    let keepLocked = false;
    /** Files this operation wrote, restored, backed up or pruned: their secret holders re-checked. */
    const touched = new Set<string>();
    try {
      await runtime.operations.begin({
        event: 'begin',
        operationId: id,
        operation: 'install',
        domain: request.domain,
        client: principal.id,
        paths,
        startedAt,
        requestSha256,
      });
      const answer = await execute(runtime, principal, request, requestSha256, startedAt, touched);
      keepLocked = answer.afterResponse !== undefined;
      return answer;
    } finally {
      if (touched.size > 0) await forgetReleased(runtime, touched);
      if (!keepLocked) runtime.locks.release(id);
    }
  } finally {
    inflight.delete(id);
  }
};

/**
 * The operation, in named steps: run the installer through the operation's writer; restore on
 * failure; build the receipt; journal the outcome; append the audit record (fsync'd) before the
 * answer; store the record, prune backups and answer.
 */
async function execute(
  runtime: ControllerRuntime,
  principal: Principal,
  request: InstallRequest,
  requestSha256: string,
  startedAt: string,
  touched: Set<string>,
): Promise<HandlerResult> {
  const id = request.operationId;
  const secrets: SecretsHolder = {};
  const writer = operationWriter(runtime, principal, request, touched, secrets);
  const ran = await runInstaller(runtime, request, writer, secrets);
  const undone = await undoFailure(writer, ran.failure);
  const finishedAt = runtime.clock.now().toISOString();
  for (const written of writer.written) touched.add(written.result.path);
  const redactor = redactorFor(runtime, secrets.values);
  const answer = answerOf(runtime, request, writer, ran, { ...undone, finishedAt }, redactor);
  await journalOutcome(runtime, writer, {
    id,
    pending: answer.pending,
    state: answer.receipt && !answer.rolledBack ? 'completed' : 'failed',
    httpStatus: answer.httpStatus,
    finishedAt,
    receipt: answer.receipt,
    redactedError: answer.redactedError,
  });

  let head: AuditHead;
  try {
    head = await appendInstallAudit(runtime, principal, request, answer, ran.runs, redactor);
  } catch (error) {
    return auditFailed(
      runtime,
      principal,
      writer,
      request,
      requestSha256,
      startedAt,
      error,
      secrets.values,
    );
  }

  return finishInstall(runtime, principal, request, writer, touched, {
    ...answer,
    requestSha256,
    startedAt,
    head,
  });
}

/** A replayed id: the original answer, never a second execution. */
async function replay(
  runtime: ControllerRuntime,
  principal: Principal,
  previous: OperationRecord,
  requestSha256: string,
): Promise<HandlerResult> {
  if (previous.requestSha256 !== requestSha256 || previous.operation !== 'install') {
    throw new FleetError(
      'REPLAY_REJECTED',
      `operation id ${previous.operationId} was already used for another request`,
    );
  }
  if (!previous.receipt && !previous.error) {
    throw new FleetError(
      'REPLAY_REJECTED',
      `operation ${previous.operationId} was ${previous.state}; see its status`,
    );
  }
  await runtime.audit.append({
    operationId: previous.operationId,
    client: principal.id,
    operation: 'install',
    paths: previous.receipt?.files.map((file) => file.path) ?? [],
    files: [],
    outcome: 'replayed',
    code: previous.error?.code ?? null,
    detail: 'answered from the record of the original; not executed again',
    ...(previous.receipt?.repoCommit === undefined
      ? {}
      : { repoCommit: previous.receipt.repoCommit }),
  });
  return {
    status: previous.httpStatus,
    body: previous.receipt ?? { error: previous.error },
    audited: true,
  };
}
