/**
 * The node's audit log (contract §5): JSON lines, one record per operation, each carrying the sha256
 * of the line before it (`prev`) and a sequence number, so an edited, removed or reordered entry
 * breaks the chain. The record shape and the verifier are here, pure, so the controller that
 * writes the log and the operator that checks it (`fleet audit verify`) share them.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { operationIdSchema, sha256Schema, timestampSchema } from './protocol.js';

/** `prev` of the first record. */
export const AUDIT_GENESIS = '0'.repeat(64);

export const AUDIT_OUTCOMES = [
  'ok',
  'unchanged',
  'denied',
  'failed',
  'rolled-back',
  'replayed',
  'interrupted',
  'recovered',
] as const;

export const auditFileSchema = z.strictObject({
  path: z.string(),
  beforeSha256: sha256Schema.nullable(),
  afterSha256: sha256Schema.nullable(),
  backupPath: z.string().nullable(),
});

/** One coupled action an operation ran: the node policy's id, the argv exactly, how it ended. */
export const auditActionSchema = z.strictObject({
  id: z.string(),
  argv: z.array(z.string()),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
});

export const auditRecordSchema = z.strictObject({
  seq: z.number().int().positive(),
  ts: timestampSchema,
  prev: sha256Schema,
  operationId: operationIdSchema.nullable(),
  /** The token's id (its accessor), `legacy`, or `null` when no token was accepted. Never a token. */
  client: z.string().nullable(),
  operation: z.string(),
  paths: z.array(z.string()),
  files: z.array(auditFileSchema),
  outcome: z.enum(AUDIT_OUTCOMES),
  code: z.string().nullable(),
  detail: z.string(),
  /** The node policy actions the operation ran, in order (contract §5.1); absent when none. */
  actions: z.array(auditActionSchema).optional(),
});

export type AuditAction = z.infer<typeof auditActionSchema>;
export type AuditRecord = z.infer<typeof auditRecordSchema>;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** The sha256 of one audit line (its UTF-8 bytes, without the newline): the next record's `prev`. */
export function auditLineHash(line: string): string {
  return createHash('sha256').update(line, 'utf8').digest('hex');
}

export interface AuditProblem {
  /** 1-based line number in the log. */
  readonly line: number;
  readonly kind: 'torn' | 'malformed' | 'edited' | 'removed' | 'reordered';
  readonly message: string;
}

export interface AuditHead {
  readonly seq: number;
  readonly sha256: string;
}

export interface AuditVerification {
  readonly ok: boolean;
  /** Records that parsed. */
  readonly entries: number;
  /** The last record's sequence number and line hash (`null` for an empty log). */
  readonly head: AuditHead | null;
  readonly problems: readonly AuditProblem[];
}

export interface VerifyAuditOptions {
  /**
   * A head the verifier trusts from elsewhere (a receipt's `audit` field, the operator's own log):
   * without one, an edit of the very last line or a cut tail cannot be told from a shorter log.
   */
  readonly head?: AuditHead;
}

interface Parsed {
  readonly line: number;
  readonly text: string;
  readonly record: AuditRecord;
}

/**
 * Verifies a whole audit log. `input` is the file's text (a last line without its newline is
 * `torn`) or its lines. Pure: reads nothing, changes nothing.
 */
export function verifyAuditChain(
  input: string | readonly string[],
  options: VerifyAuditOptions = {},
): AuditVerification {
  const problems: AuditProblem[] = [];
  let lines: string[];
  let tornLast = false;
  if (typeof input === 'string') {
    lines = input === '' ? [] : input.split('\n');
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    else if (lines.length > 0) tornLast = true;
  } else {
    lines = [...input];
  }

  const parsed: Parsed[] = [];
  lines.forEach((text, index) => {
    const line = index + 1;
    const last = index === lines.length - 1;
    if (last && tornLast) {
      problems.push({ line, kind: 'torn', message: `line ${line} is incomplete (no newline)` });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      problems.push({
        line,
        kind: last ? 'torn' : 'malformed',
        message: `line ${line} is not JSON`,
      });
      return;
    }
    const result = auditRecordSchema.safeParse(value);
    if (!result.success) {
      problems.push({ line, kind: 'malformed', message: `line ${line} is not an audit record` });
      return;
    }
    parsed.push({ line, text, record: result.data });
  });

  const seqs = new Set(parsed.map((entry) => entry.record.seq));
  let previous: Parsed | undefined;
  for (const entry of parsed) {
    const { record, line } = entry;
    const expectedPrev = previous === undefined ? AUDIT_GENESIS : auditLineHash(previous.text);
    const expectedSeq = previous === undefined ? 1 : previous.record.seq + 1;
    if (record.seq === expectedSeq && record.prev !== expectedPrev) {
      const at = previous?.line ?? line;
      problems.push({
        line: at,
        kind: 'edited',
        message:
          previous === undefined
            ? `line ${line} (seq ${record.seq}) does not start the chain`
            : `line ${at} (seq ${previous.record.seq}) was changed: its hash is not line ${line}'s prev`,
      });
    } else if (record.seq > expectedSeq) {
      const missing: number[] = [];
      for (let seq = expectedSeq; seq < record.seq; seq += 1) missing.push(seq);
      const elsewhere = missing.every((seq) => seqs.has(seq));
      problems.push({
        line,
        kind: elsewhere ? 'reordered' : 'removed',
        message: elsewhere
          ? `line ${line} (seq ${record.seq}) is out of order`
          : `record${missing.length > 1 ? 's' : ''} ${missing.join(', ')} missing before line ${line}`,
      });
    } else if (record.seq < expectedSeq) {
      problems.push({
        line,
        kind: 'reordered',
        message: `line ${line} (seq ${record.seq}) is out of order or repeated`,
      });
    }
    previous = entry;
  }

  const head =
    previous === undefined
      ? null
      : { seq: previous.record.seq, sha256: auditLineHash(previous.text) };
  if (options.head) {
    const trusted = options.head;
    const at = previous?.line ?? 0;
    if (head === null || head.seq < trusted.seq) {
      problems.push({
        line: at,
        kind: 'removed',
        message: `the log ends at seq ${head?.seq ?? 0}, before the trusted head seq ${trusted.seq}`,
      });
    } else {
      const match = parsed.find((entry) => entry.record.seq === trusted.seq);
      if (!match || auditLineHash(match.text) !== trusted.sha256) {
        problems.push({
          line: match?.line ?? at,
          kind: 'edited',
          message: `the record with seq ${trusted.seq} does not hash to the trusted head`,
        });
      }
    }
  }
  problems.sort((a, b) => a.line - b.line);
  return { ok: problems.length === 0, entries: parsed.length, head, problems };
}
