/**
 * What an install answers and audits (contract §8.4), once its installer ran and a failure was
 * undone (install-undo.ts): the receipt (or the error of a refusal before any write), the HTTP
 * status, the redacted errors, a pending restart, and the audit record appended before the answer.
 */
import type {
  ActionOutcome,
  ActionRun,
  AuditHead,
  AuditRecord,
  InstallRequest,
  NodeInstallResult,
  ReceiptFile,
  Redactor,
} from '@fleet/core/node';
import { errorBody, type WireError } from '../http/respond.js';
import type { ControllerRuntime } from '../runtime.js';
import type { Principal } from '../tokens/auth.js';
import type { OperationWriter } from '../writer.js';
import { auditedActions } from './install-checks.js';
import { buildReceipt, receiptFiles, redactedActions, type UnauditedReceipt } from './receipt.js';

/** What running the installer gave: its result, or the failure and the actions it reported. */
export interface InstallerOutcome {
  readonly result: NodeInstallResult | undefined;
  readonly failure: WireError | undefined;
  /** The actions a failing installer reported with its error (what ran before it failed). */
  readonly failedActions: readonly ActionOutcome[];
  /** Every node policy action the installer ran, in order (the audit record names them). */
  readonly runs: readonly ActionRun[];
  /**
   * The failed action's output tail (`FleetError.toolOutput`), only when the request asked for it
   * (`toolOutput: true`): it goes into the answer alone, never into the node's records.
   */
  readonly toolOutput?: string;
}

export type RedactedError = ReturnType<typeof errorBody>['error'];

/** What the operation answers, once the installer ran and a failure was undone. */
export interface InstallAnswer {
  readonly finishedAt: string;
  readonly files: ReceiptFile[];
  /** A receipt for a success or a rolled-back failure; none for a refusal before any write. */
  readonly receipt: UnauditedReceipt | undefined;
  readonly rolledBack: boolean;
  readonly failure: WireError | undefined;
  readonly redactedError: RedactedError | undefined;
  /** The error as answered: `redactedError`, with the action's output tail when asked for. */
  readonly answeredError: RedactedError | undefined;
  readonly httpStatus: number;
  /** Answered before a coupled restart: journaled so the next controller settles it (recovery.ts). */
  readonly pending: NodeInstallResult['pending'];
}

const RESTORED_ACTION = {
  kind: 'restore',
  status: 'ok' as const,
  detail: 'every written file was restored from its backup',
};

function auditOutcome(
  receipt: UnauditedReceipt | undefined,
  rolledBack: boolean,
): AuditRecord['outcome'] {
  if (!receipt) return 'failed';
  if (rolledBack) return 'rolled-back';
  return receipt.outcome === 'unchanged' ? 'unchanged' : 'ok';
}

/** The receipt, the status and the errors the operation answers with, redacted. */
export function answerOf(
  runtime: ControllerRuntime,
  request: InstallRequest,
  writer: OperationWriter,
  ran: InstallerOutcome,
  settled: {
    readonly failure: WireError | undefined;
    readonly rolledBack: boolean;
    readonly finishedAt: string;
  },
  redactor: Redactor,
): InstallAnswer {
  const { failure, rolledBack, finishedAt } = settled;
  const { result, failedActions, toolOutput } = ran;
  const files = receiptFiles(writer.written, redactor);
  const redactedError = failure ? errorBody(failure, redactor).error : undefined;
  const receipt =
    failure === undefined || rolledBack
      ? buildReceipt({
          operationId: request.operationId,
          host: runtime.nodeId,
          domain: request.domain,
          files,
          actions: [
            ...redactedActions(result?.actions ?? failedActions, redactor),
            ...(rolledBack ? [RESTORED_ACTION] : []),
          ],
          verified: failure === undefined && result?.verified === true,
          ...(redactedError
            ? { error: { code: redactedError.code, message: redactedError.message } }
            : {}),
          finishedAt,
          ...(request.repoCommit === undefined ? {} : { repoCommit: request.repoCommit }),
        })
      : undefined;
  const httpStatus = receipt ? 200 : (failure as WireError).status;
  // A refusal before any write is an error answer: the action's output tail goes into it alone
  // (redacted like the message), not into the journal or the stored record a replay is answered
  // from. A rolled-back receipt keeps its own shape (its actions say what failed).
  const answeredError =
    failure !== undefined && toolOutput !== undefined && receipt === undefined
      ? errorBody({ ...failure, toolOutput }, redactor).error
      : redactedError;
  const pending = failure === undefined ? result?.pending : undefined;
  return {
    finishedAt,
    files,
    receipt,
    rolledBack,
    failure,
    redactedError,
    answeredError,
    httpStatus,
    pending,
  };
}

/**
 * The audit record's detail, pure: the receipt's outcome and file counts (and a pending restart),
 * or the redacted error; marked when the install ran unattended.
 */
export function installAuditDetail(
  unattended: boolean,
  receipt: Pick<UnauditedReceipt, 'outcome'> | undefined,
  files: readonly Pick<ReceiptFile, 'state'>[],
  pending: { readonly detail: string } | undefined,
  redactedError: { readonly message: string } | undefined,
): string {
  return (
    (unattended ? 'unattended: ' : '') +
    (receipt
      ? `${receipt.outcome}: ${files.filter((f) => f.state === 'written').length} written, ${files.filter((f) => f.state === 'unchanged').length} unchanged, ${files.filter((f) => f.state === 'restored').length} restored${pending ? `; ${pending.detail}` : ''}`
      : (redactedError?.message ?? ''))
  );
}

/** The install's audit record, appended and fsync'd before the answer (contract §8.4). */
export function appendInstallAudit(
  runtime: ControllerRuntime,
  principal: Principal,
  request: InstallRequest,
  answer: InstallAnswer,
  runs: readonly ActionRun[],
  redactor: Redactor,
): Promise<AuditHead> {
  const { files, receipt, rolledBack, failure, pending, redactedError } = answer;
  return runtime.audit.append({
    operationId: request.operationId,
    client: principal.id,
    operation: 'install',
    paths: request.files.map((file) => file.path),
    files: files.map((file) => ({
      path: file.path,
      beforeSha256: file.beforeSha256,
      afterSha256: file.afterSha256,
      backupPath: file.backupPath,
      ...(file.mode === undefined ? {} : { mode: file.mode }),
    })),
    outcome: auditOutcome(receipt, rolledBack),
    code: failure?.code ?? null,
    detail: installAuditDetail(request.unattended === true, receipt, files, pending, redactedError),
    ...(runs.length > 0 ? { actions: auditedActions(runs, redactor) } : {}),
    ...(request.repoCommit === undefined ? {} : { repoCommit: request.repoCommit }),
  });
}
