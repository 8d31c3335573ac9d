/**
 * The node's audit log (contract §5): JSON lines, one record per operation, each carrying the sha256
 * of the line before it (`prev`) and a sequence number, so an edited, removed or reordered entry
 * breaks the chain. The record shape and the verifier are here, pure, so the controller that
 * writes the log and the operator that checks it (`fleet audit verify`) share them.
 */
import { createHash } from 'node:crypto';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { commitIdSchema, operationIdSchema, sha256Schema, timestampSchema } from './protocol.js';
import { fileModeChangeSchema } from './receipt.js';

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

export const auditFileSchema = z.lazy(() =>
  z.strictObject({
    path: z.string(),
    beforeSha256: sha256Schema.nullable(),
    afterSha256: sha256Schema.nullable(),
    backupPath: z.string().nullable(),
    /** The mode before and after, for a file whose install named one (contract §10.4). */
    mode: fileModeChangeSchema.optional(),
  }),
);

/** One coupled action an operation ran: the node policy's id, the argv exactly, how it ended. */
export const auditActionSchema = z.lazy(() =>
  z.strictObject({
    id: z.string(),
    argv: z.array(z.string()),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
  }),
);

/**
 * Refusals that carried no operation id, counted instead of written one by one (contract §15): one
 * record per (client or remote address, operation, code) per interval, so a flood of 401s cannot
 * fill the disk.
 */
export const auditAggregateSchema = z.lazy(() =>
  z.strictObject({
    count: z.number().int().positive(),
    /** The remote address the refusals came from (`null` when they are counted per client). */
    remote: z.string().nullable(),
    /** The first and the last refusal counted. */
    since: timestampSchema,
    until: timestampSchema,
  }),
);

/**
 * What the first record of a segment says about the segments before it (contract §15): the log
 * rotates at a size bound into chained segments; this record's `prev` is the closed segment's
 * head, and `retainedFromSeq`/`retainedPrev` say where the kept log starts after older segments
 * were pruned — so a pruned segment is told from a removed one.
 */
export const auditSegmentSchema = z.lazy(() =>
  z.strictObject({
    /** The file the previous records were closed into (`audit.000000000001.jsonl`). */
    previous: z.string(),
    /** The first record still kept; every record before it was pruned by retention. */
    retainedFromSeq: z.number().int().positive(),
    /** The line hash of the record before `retainedFromSeq` (genesis when nothing was pruned). */
    retainedPrev: sha256Schema,
  }),
);

export const auditRecordSchema = z.lazy(() =>
  z.strictObject({
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
    /**
     * An install's fleet repository commit, as its request named it (contract §8.4): the record
     * says which commit the written content came from. Absent when the request named none.
     */
    repoCommit: commitIdSchema.nullable().optional(),
    aggregate: auditAggregateSchema.optional(),
    segment: auditSegmentSchema.optional(),
  }),
);

export type AuditAction = z.infer<typeof auditActionSchema>;
export type AuditRecord = z.infer<typeof auditRecordSchema>;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** The sha256 of one audit line (its UTF-8 bytes, without the newline): the next record's `prev`. */
export function auditLineHash(line: string): string {
  return createHash('sha256').update(line, 'utf8').digest('hex');
}

export interface AuditProblem {
  /** 1-based line number in the log (all segments, oldest first, as one sequence of lines). */
  readonly line: number;
  readonly kind: 'torn' | 'malformed' | 'edited' | 'removed' | 'reordered' | 'rewritten';
  readonly message: string;
  /** The segment file the line is in and its line there (verifyAuditSegments only). */
  readonly segment?: string;
  readonly segmentLine?: number;
}

export interface AuditHead {
  readonly seq: number;
  readonly sha256: string;
}

/**
 * A head as text, `<seq>:<sha256>`: how the `fleet-audit-head` header carries it and the
 * operator's journal of seen heads keeps it (core client/audit-heads-journal.ts).
 */
export const formatAuditHead = (head: AuditHead): string => `${head.seq}:${head.sha256}`;

/** {@link formatAuditHead}'s text back; `undefined` for anything else (seq 0 included). */
export function parseAuditHead(text: string): AuditHead | undefined {
  const match = /^(\d{1,15}):([0-9a-f]{64})$/.exec(text);
  if (!match) return undefined;
  const seq = Number(match[1]);
  return seq > 0 ? { seq, sha256: match[2] as string } : undefined;
}

export interface AuditVerification {
  readonly ok: boolean;
  /** Records that parsed. */
  readonly entries: number;
  /** The last record's sequence number and line hash (`null` for an empty log). */
  readonly head: AuditHead | null;
  /** The first record's sequence number (1, or later when older segments were pruned). */
  readonly firstSeq: number | null;
  readonly problems: readonly AuditProblem[];
}

export interface VerifyAuditOptions {
  /**
   * A head the verifier trusts from elsewhere (a receipt's `audit` field, the controller's memory):
   * without one, an edit of the very last line or a cut tail cannot be told from a shorter log.
   */
  readonly head?: AuditHead;
  /**
   * Heads an operator saw earlier (its own state, after every verb that talked to the node): a log
   * that does not contain one of them was rewritten behind the operator's back (`rewritten`).
   * A head older than the kept log (pruned by retention) cannot be checked and is skipped.
   */
  readonly seen?: readonly AuditHead[];
}

interface Parsed {
  readonly line: number;
  readonly text: string;
  readonly record: AuditRecord;
}

function splitInput(input: string | readonly string[]): { lines: string[]; tornLast: boolean } {
  if (typeof input !== 'string') return { lines: [...input], tornLast: false };
  const lines = input === '' ? [] : input.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') {
    lines.pop();
    return { lines, tornLast: false };
  }
  return { lines, tornLast: lines.length > 0 };
}

function parseLines(lines: readonly string[], tornLast: boolean, problems: AuditProblem[]) {
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
      const kind = last ? 'torn' : 'malformed';
      const what = text.includes('\u0000') ? 'holds NUL bytes (a hole)' : 'is not JSON';
      problems.push({ line, kind, message: `line ${line} ${what}` });
      return;
    }
    const result = auditRecordSchema.safeParse(value);
    if (!result.success) {
      problems.push({ line, kind: 'malformed', message: `line ${line} is not an audit record` });
      return;
    }
    parsed.push({ line, text, record: result.data });
  });
  return parsed;
}

/**
 * Where the kept log may start: seq 1 from genesis, or — after retention pruned older segments —
 * where the newest rotation record says the kept log starts (`segment.retainedFromSeq`).
 */
function checkStart(parsed: readonly Parsed[], problems: AuditProblem[]): void {
  const first = parsed[0];
  if (first === undefined) return;
  const claims = parsed.flatMap((entry) =>
    entry.record.segment ? [{ entry, claim: entry.record.segment }] : [],
  );
  const newest = claims.reduce<(typeof claims)[number] | undefined>(
    (best, item) =>
      best === undefined || item.claim.retainedFromSeq > best.claim.retainedFromSeq ? item : best,
    undefined,
  );
  const retainedFrom = newest?.claim.retainedFromSeq ?? 1;
  const { seq, prev } = first.record;
  if (seq === 1) {
    if (prev !== AUDIT_GENESIS) {
      problems.push({
        line: first.line,
        kind: 'edited',
        message: `line ${first.line} (seq 1) does not start the chain`,
      });
    }
  } else if (seq > retainedFrom) {
    const seqs = new Set(parsed.map((entry) => entry.record.seq));
    let elsewhere = true;
    for (let s = retainedFrom; s < seq && elsewhere; s += 1) elsewhere = seqs.has(s);
    const missing = retainedFrom === seq - 1 ? `${retainedFrom}` : `${retainedFrom}–${seq - 1}`;
    problems.push(
      elsewhere
        ? {
            line: first.line,
            kind: 'reordered',
            message: `line ${first.line} (seq ${seq}) is out of order`,
          }
        : {
            line: first.line,
            kind: 'removed',
            message: `records ${missing} missing before line ${first.line}: no rotation record says they were pruned`,
          },
    );
  } else if (seq === retainedFrom && newest && prev !== newest.claim.retainedPrev) {
    problems.push({
      line: first.line,
      kind: 'edited',
      message: `line ${first.line} (seq ${seq}) is not the record the rotation at line ${newest.entry.line} kept`,
    });
  }
  for (const { entry, claim } of claims) {
    const kept = parsed.find((other) => other.record.seq === claim.retainedFromSeq);
    if (kept && kept.record.prev !== claim.retainedPrev) {
      problems.push({
        line: entry.line,
        kind: 'edited',
        message: `the rotation at line ${entry.line} names a kept start that is not line ${kept.line}`,
      });
    }
  }
}

function checkLinks(parsed: readonly Parsed[], problems: AuditProblem[]): void {
  const seqs = new Set(parsed.map((entry) => entry.record.seq));
  let previous: Parsed | undefined;
  for (const entry of parsed) {
    if (previous === undefined) {
      previous = entry;
      continue;
    }
    const { record, line } = entry;
    const expectedSeq = previous.record.seq + 1;
    if (record.seq === expectedSeq && record.prev !== auditLineHash(previous.text)) {
      problems.push({
        line: previous.line,
        kind: 'edited',
        message: `line ${previous.line} (seq ${previous.record.seq}) was changed: its hash is not line ${line}'s prev`,
      });
    } else if (record.seq > expectedSeq) {
      const missing: number[] = [];
      for (let seq = expectedSeq; seq < record.seq && missing.length <= 1000; seq += 1)
        missing.push(seq);
      const elsewhere = missing.every((seq) => seqs.has(seq));
      const shown = missing.length > 3 ? `${expectedSeq}–${record.seq - 1}` : missing.join(', ');
      problems.push({
        line,
        kind: elsewhere ? 'reordered' : 'removed',
        message: elsewhere
          ? `line ${line} (seq ${record.seq}) is out of order`
          : `record${missing.length > 1 ? 's' : ''} ${shown} missing before line ${line}`,
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
}

function checkTrusted(
  parsed: readonly Parsed[],
  trusted: AuditHead,
  kind: 'edited' | 'rewritten',
  problems: AuditProblem[],
): void {
  const first = parsed[0];
  const last = parsed[parsed.length - 1];
  const at = last?.line ?? 0;
  const who = kind === 'rewritten' ? 'a head seen earlier' : 'the trusted head';
  if (last === undefined || last.record.seq < trusted.seq) {
    problems.push({
      line: at,
      kind: kind === 'rewritten' ? 'rewritten' : 'removed',
      message: `the log ends at seq ${last?.record.seq ?? 0}, before ${who} (seq ${trusted.seq})`,
    });
    return;
  }
  if (first !== undefined && trusted.seq < first.record.seq) {
    // Older than the kept log: only the record just before the kept start can still be checked.
    if (trusted.seq === first.record.seq - 1 && first.record.prev !== trusted.sha256) {
      problems.push({
        line: first.line,
        kind,
        message: `line ${first.line} (seq ${first.record.seq}) does not follow ${who} (seq ${trusted.seq})`,
      });
    }
    return;
  }
  const match = parsed.find((entry) => entry.record.seq === trusted.seq);
  if (!match || auditLineHash(match.text) !== trusted.sha256) {
    problems.push({
      line: match?.line ?? at,
      kind,
      message:
        kind === 'rewritten'
          ? `the record with seq ${trusted.seq} is not the one seen earlier: the log was rewritten`
          : `the record with seq ${trusted.seq} does not hash to the trusted head`,
    });
  }
}

/**
 * Verifies a whole audit log. `input` is the file's text (a last line without its newline is
 * `torn`) or its lines — for a rotated log, every kept segment's lines, oldest first. Pure: reads
 * nothing, changes nothing.
 */
export function verifyAuditChain(
  input: string | readonly string[],
  options: VerifyAuditOptions = {},
): AuditVerification {
  const problems: AuditProblem[] = [];
  const { lines, tornLast } = splitInput(input);
  const parsed = parseLines(lines, tornLast, problems);
  checkStart(parsed, problems);
  checkLinks(parsed, problems);
  if (options.head) checkTrusted(parsed, options.head, 'edited', problems);
  for (const seen of options.seen ?? []) checkTrusted(parsed, seen, 'rewritten', problems);
  problems.sort((a, b) => a.line - b.line);
  const last = parsed[parsed.length - 1];
  return {
    ok: problems.length === 0,
    entries: parsed.length,
    head: last === undefined ? null : { seq: last.record.seq, sha256: auditLineHash(last.text) },
    firstSeq: parsed[0]?.record.seq ?? null,
    problems,
  };
}
