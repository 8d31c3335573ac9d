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
 */
import { basename, join } from 'node:path';
import {
  FleetError,
  isFleetError,
  resolveSecrets,
  type ActionOutcome,
  type ActionRun,
  type AuditHead,
  type InstallRequest,
  type NodeInstallResult,
  type SecretValues,
} from '@fleet/core/node';
import { pruneBackups } from '../backups.js';
import { createNodeContext } from '../context.js';
import { failpoint } from '../failpoints.js';
import { managedTarget } from '../fs/managed-target.js';
import { readLive, sha256Hex } from '../fs/safe-path.js';
import { errorBody, toWireError, type WireError } from '../http/respond.js';
import type { OperationRecord } from '../operations.js';
import { redactorFor, type ControllerRuntime } from '../runtime.js';
import { STATE_DIR } from '../state-paths.js';
import { tokenState } from '../tokens/store.js';
import type { Principal } from '../tokens/auth.js';
import { OperationWriter, preconditionFailed } from '../writer.js';
import { withAudit, type UnauditedReceipt } from './receipt.js';
import {
  answerOf,
  appendInstallAudit,
  type InstallAnswer,
  type InstallerOutcome,
} from './install-answer.js';
import { validate } from './install-checks.js';
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

async function recheckToken(runtime: ControllerRuntime, principal: Principal): Promise<void> {
  const record = (await runtime.tokens.current()).get(principal.id);
  const state = record ? tokenState(record, runtime.clock.now()) : 'revoked';
  if (state === 'revoked')
    throw new FleetError(
      'AUTH_REVOKED',
      `token ${principal.id} was revoked during the install; nothing more was changed`,
    );
  if (state === 'expired')
    throw new FleetError('AUTH_EXPIRED', `token ${principal.id} expired during the install`);
}

/**
 * After an operation, the secret memory re-reads what it touched (docs/secrets.md): a value no
 * file holds any more is forgotten. Best effort — a failure keeps values remembered (safe side).
 */
async function forgetReleased(runtime: ControllerRuntime, touched: Set<string>): Promise<void> {
  const chain = await runtime.secrets().catch(() => new Map<string, string>());
  await runtime.secretMemory.reconcile(touched, chain).catch((error: unknown) => {
    process.stderr.write(
      `controller: the secret memory was not reconciled: ${(error as Error)?.message ?? String(error)}\n`,
    );
  });
}

/** The secrets of one operation, read once the installer runs (the writer's retain needs them). */
interface SecretsHolder {
  values?: SecretValues;
}

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

/** A failed install's writes restored: rolled back, or the error that a restore failed. */
async function undoFailure(
  writer: OperationWriter,
  failure: WireError | undefined,
): Promise<{ readonly failure: WireError | undefined; readonly rolledBack: boolean }> {
  if (failure === undefined) return { failure, rolledBack: false };
  const restored = await restoreAll(writer);
  if (restored !== undefined) return { failure: restored, rolledBack: false };
  return { failure, rolledBack: writer.written.some((w) => w.restored) };
}

/**
 * The operation's last step, once its audit record is written: the record stored, the backups
 * pruned after a completed install, the answer (and a coupled restart to run after it).
 */
async function finishInstall(
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

/** The operation's writer: its locks, journal, limits, token re-check and secret memory. */
function operationWriter(
  runtime: ControllerRuntime,
  principal: Principal,
  request: InstallRequest,
  touched: Set<string>,
  secrets: SecretsHolder,
): OperationWriter {
  return new OperationWriter({
    home: runtime.home,
    state: runtime.state,
    operationId: request.operationId,
    domain: request.domain,
    allowlist: runtime.allowlist,
    locks: runtime.locks,
    operations: runtime.operations,
    clock: runtime.clock,
    fileLimit: runtime.limits.maxFileBytes,
    beforeCommit: () => recheckToken(runtime, principal),
    retain: (holders) => {
      for (const holder of holders) touched.add(holder.path);
      return runtime.secretMemory.retain(holders, secrets.values ?? new Map());
    },
  });
}

/**
 * Checks every secret and every live sha256, then runs the domain's installer with the writer.
 * Never throws: a failure is returned, as the wire error the receipt or the answer carries.
 */
async function runInstaller(
  runtime: ControllerRuntime,
  request: InstallRequest,
  writer: OperationWriter,
  secrets: SecretsHolder,
): Promise<InstallerOutcome> {
  const runs: ActionRun[] = [];
  let result: NodeInstallResult | undefined;
  try {
    // Inside the try: a malformed env file fails this operation cleanly (its record answers a
    // retry of the same id; a new id is free to go), never leaves its journal open.
    secrets.values = await runtime.secrets();
    const installer = await runtime.registry.installer(request.domain);
    for (const file of request.files) {
      // A file that is not a template, or bytes (`encoding`), names no secret (contract §10.4).
      if (file.template !== false && file.encoding === undefined) {
        resolveSecrets(file.content, secrets.values, file.path);
      }
      const live = await readLive(
        runtime.home,
        await managedTarget(runtime.home, file.path, runtime.allowlist.symlinkDirs),
        runtime.limits.maxFileBytes,
      );
      if ((live?.sha256 ?? null) !== file.expectedSha256)
        throw preconditionFailed(file.path, live?.sha256 ?? null);
    }
    const ctx = createNodeContext({
      home: runtime.home,
      nodeId: runtime.nodeId,
      clock: runtime.clock,
      secrets: () => runtime.secrets(),
      beforeProcess: () => failpoint('install.during_action'),
      actions: {
        domain: request.domain,
        actions: runtime.allowlist.actionsOf(request.domain),
        runs,
      },
      // The node's recorded supervisor, for a domain that restarts the controller (§10.2).
      registry: runtime.registry,
      ...(runtime.view.policy.supervisor
        ? { policySupervisor: runtime.view.policy.supervisor }
        : {}),
    });
    // The commit is the node's record of provenance and `toolOutput` a wish about the answer, not
    // the installer's input: a plugin's `NodeInstallRequest` stays what it was (core
    // interfaces/installer.ts).
    const { repoCommit: _provenance, toolOutput: _shown, ...forInstaller } = request;
    result = await installer.install(
      ctx,
      { ...forInstaller, files: [...request.files], actions: { ...request.actions } },
      writer,
    );
    if (!result.verified && result.pending === undefined)
      throw new FleetError(
        'VERIFICATION_FAILED',
        `the ${request.domain} installer could not verify the install`,
      );
    return { result, failure: undefined, failedActions: [], runs };
  } catch (error) {
    let failure = toWireError(error);
    if (!isFleetError(error))
      failure = {
        ...failure,
        message: `the ${request.domain} installer failed: ${(error as Error)?.message ?? String(error)}`,
      };
    const shown = request.toolOutput === true && isFleetError(error) ? error.toolOutput : undefined;
    return {
      result,
      failure,
      failedActions: failedActionsOf(error),
      runs,
      ...(shown === undefined ? {} : { toolOutput: shown }),
    };
  }
}

/** Journals a pending restart (if any) and the outcome; a journal that cannot be written undoes the writes. */
async function journalOutcome(
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

/** The coupled actions that ran before the installer threw: `FleetError.actions` (typed in core). */
function failedActionsOf(error: unknown): readonly ActionOutcome[] {
  return isFleetError(error) ? (error.actions ?? []) : [];
}

/**
 * The answer could not be journaled (disk full: catalogue 25), so a crash could not complete it:
 * the operation is not done. Its writes are undone and the journal's failure is what is answered
 * (or `RECOVERY_REQUIRED` when a write cannot be undone).
 */
async function undoFor(writer: OperationWriter, error: unknown): Promise<never> {
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
async function auditFailed(
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
