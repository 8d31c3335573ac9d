/** Building `fleet.receipt/v1` (contract §8.4) from what the writer did: diffs redacted on the node. */
import {
  RECEIPT_SCHEMA,
  formatFileMode,
  unifiedDiff,
  type ActionOutcome,
  type AuditHead,
  type Receipt,
  type ReceiptFile,
  type Redactor,
} from '@fleet/core/node';
import type { WrittenFile } from '../writer-types.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function asText(bytes: Uint8Array | null): string | undefined {
  if (bytes === null) return '';
  if (bytes.includes(0)) return undefined;
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The redacted unified diff of one written file. */
export function redactedDiff(written: WrittenFile, redactor: Redactor): string {
  if (written.result.unchanged) return '';
  const before = asText(written.before);
  const after = asText(written.after);
  if (before === undefined || after === undefined) return '(not UTF-8 text: diff omitted)';
  return unifiedDiff(redactor.content(before), redactor.content(after), {
    from: `a/${written.result.path}`,
    to: `b/${written.result.path}`,
  });
}

/** One entry per path: the last thing the writer did to it. */
export function receiptFiles(written: readonly WrittenFile[], redactor: Redactor): ReceiptFile[] {
  const byPath = new Map<string, WrittenFile>();
  for (const w of written) byPath.set(w.result.path, w);
  return [...byPath.values()].map((w) => ({
    path: w.result.path,
    fileId: w.fileId,
    beforeSha256: w.result.beforeSha256,
    afterSha256: w.result.afterSha256,
    backupPath: w.result.backupPath,
    diff: redactedDiff(w, redactor),
    state: w.result.unchanged ? 'unchanged' : w.restored ? 'restored' : 'written',
    ...(w.hardlinkBroken && !w.restored ? { hardlinkBroken: true } : {}),
    ...(w.modeChange === undefined ? {} : { mode: receiptMode(w.modeChange) }),
  }));
}

/** A requested mode change in the receipt's words (`{ before: "0644", after: "0600" }`). */
export function receiptMode(change: NonNullable<WrittenFile['modeChange']>): {
  before: string | null;
  after: string;
} {
  return {
    before: change.before === null ? null : formatFileMode(change.before),
    after: formatFileMode(change.after),
  };
}

/** The actions' details redacted: a domain's action may quote a command's output (annotations). */
export function redactedActions(
  actions: readonly ActionOutcome[],
  redactor: Redactor,
): ActionOutcome[] {
  return actions.map((action) => ({ ...action, detail: redactor.annotation(action.detail) }));
}

export type UnauditedReceipt = Omit<Receipt, 'audit'>;

export function buildReceipt(input: {
  operationId: string;
  host: string;
  domain: string;
  files: ReceiptFile[];
  actions: readonly ActionOutcome[];
  verified: boolean;
  error?: { code: string; message: string };
  finishedAt: string;
  /** The request's `repoCommit`, echoed only when it named one (contract §8.4). */
  repoCommit?: string | null;
}): UnauditedReceipt {
  const rolledBack = input.error !== undefined;
  return {
    schema: RECEIPT_SCHEMA,
    operationId: input.operationId,
    host: input.host,
    domain: input.domain,
    outcome: rolledBack
      ? 'rolled-back'
      : input.files.every((file) => file.state === 'unchanged')
        ? 'unchanged'
        : 'installed',
    files: input.files,
    actions: [...input.actions],
    verified: input.verified,
    ...(input.error === undefined ? {} : { error: input.error }),
    finishedAt: input.finishedAt,
    ...(input.repoCommit === undefined ? {} : { repoCommit: input.repoCommit }),
  };
}

export function withAudit(receipt: UnauditedReceipt, audit: AuditHead): Receipt {
  return { ...receipt, audit: { seq: audit.seq, sha256: audit.sha256 } };
}
