/**
 * One record of the runtime journal (journal.ts): the steps a transaction goes through, its kinds
 * and outcomes, the data each step carries and the envelope around it (sequence number, time,
 * transaction, checksum), and its line — the record's JSON with the sha256 of the rest appended as
 * `sum` ({@link encodeRecord}, {@link decodeLine}). Apart from the journal's transitions, parsing
 * and file because this is the format alone: what a record is, not where it may follow.
 */
import * as z from '@fleet/core/zod';
import { BUILD_ID_PATTERN } from '@fleet/core/node';
import { runtimeExpectationSchema } from './acceptance.js';
import { sha256Hex } from './tree.js';

export const JOURNAL_STEPS = [
  'begin',
  'staged',
  'activated',
  'supervisor-restarted',
  'accepted',
  'failed',
  'rolled-back',
  'manual-recovery-required',
  'end',
] as const;
export type JournalStep = (typeof JOURNAL_STEPS)[number];

export const TRANSACTION_KINDS = ['upgrade', 'bootstrap', 'rollback'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

export const OUTCOMES = ['accepted', 'rolled-back', 'manual-recovery-required', 'failed'] as const;
export type TransactionOutcome = (typeof OUTCOMES)[number];

const buildId = z.string().regex(BUILD_ID_PATTERN);

/** The data each step carries. */
export const stepDataSchemas = {
  begin: z.strictObject({
    kind: z.enum(TRANSACTION_KINDS),
    supervisor: z.string(),
    /** What the new runtime must report to be accepted; `target.build.sha256` is the build id. */
    target: runtimeExpectationSchema,
    /** What the prior runtime reported (the rollback target), `null` on a first bootstrap. */
    prior: runtimeExpectationSchema.nullable(),
    /** The bootstrap plan this transaction applies (contract §12), when it applies one. */
    planId: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .optional(),
  }),
  staged: z.strictObject({
    buildId,
    treeHash: z.string().regex(/^[0-9a-f]{64}$/),
    reused: z.boolean(),
  }),
  activated: z.strictObject({ buildId, previous: buildId.nullable() }),
  'supervisor-restarted': z.strictObject({
    supervisor: z.string(),
    pid: z.number().int().positive().nullable(),
  }),
  accepted: z.strictObject({ buildId }),
  failed: z.strictObject({
    /** The step that failed. */
    during: z.enum(['stage', 'activate', 'restart', 'acceptance', 'rollback', 'other']),
    code: z.string(),
    message: z.string(),
    /** Failed acceptance criteria, one line each. */
    criteria: z.array(z.string()),
  }),
  'rolled-back': z.strictObject({ buildId }),
  'manual-recovery-required': z.strictObject({ reason: z.string() }),
  end: z.strictObject({ outcome: z.enum(OUTCOMES) }),
} satisfies Record<JournalStep, z.ZodType>;

export type StepData<S extends JournalStep> = z.infer<(typeof stepDataSchemas)[S]>;

export const envelopeSchema = z.strictObject({
  v: z.literal(1),
  seq: z.number().int().positive(),
  at: z.string(),
  txn: z.string().min(1).max(64),
  step: z.enum(JOURNAL_STEPS),
  data: z.unknown(),
  sum: z.string().regex(/^[0-9a-f]{64}$/),
});

export type JournalRecord = {
  [S in JournalStep]: {
    readonly v: 1;
    readonly seq: number;
    readonly at: string;
    readonly txn: string;
    readonly step: S;
    readonly data: StepData<S>;
    readonly sum: string;
  };
}[JournalStep];

export type RecordOf<S extends JournalStep> = Extract<JournalRecord, { step: S }>;

// ---- encoding ---------------------------------------------------------------------------------

const SUM_SUFFIX = /,"sum":"([0-9a-f]{64})"\}$/;

/** One journal line (without its newline): the record's JSON with its checksum appended. */
export function encodeRecord(record: Omit<JournalRecord, 'sum'>): string {
  const body = JSON.stringify({
    v: record.v,
    seq: record.seq,
    at: record.at,
    txn: record.txn,
    step: record.step,
    data: record.data,
  });
  return `${body.slice(0, -1)},"sum":"${sha256Hex(body)}"}`;
}

export function decodeLine(line: string): { record?: JournalRecord; reason?: string } {
  const match = SUM_SUFFIX.exec(line);
  if (!match) return { reason: 'no checksum' };
  const body = `${line.slice(0, match.index)}}`;
  if (sha256Hex(body) !== match[1]) return { reason: 'bad checksum' };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { reason: 'not JSON' };
  }
  const envelope = envelopeSchema.safeParse(value);
  if (!envelope.success) return { reason: 'not a journal record' };
  const data = stepDataSchemas[envelope.data.step].safeParse(envelope.data.data);
  if (!data.success) return { reason: `bad ${envelope.data.step} data` };
  return { record: { ...envelope.data, data: data.data } as JournalRecord };
}
