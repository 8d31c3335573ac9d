/**
 * What a rotation does, decided as data (docs/audit-log.md, "Segments and their chaining"): the
 * name the active segment is closed into, which closed segments retention prunes, and the
 * `audit.rotate` record that opens the new segment — its `prev` the closed segment's head, its
 * `segment` field where the kept log starts. Pure; log.ts does the renames.
 *
 * Retention prunes the oldest closed segments past `keepSegments` — a prefix, so the kept log
 * stays one chain — and stops at the first segment holding a write's record (an operation id:
 * installs, token and runtime operations, refused writes) past what the operator released
 * (`audit.release.json`, `fleet audit verify --home DIR --release`). Reads alone never delete a
 * write's record. Past `maxSegments` closed segments the rotation is refused (`full`): the disk
 * stays bounded, and the log fails closed instead of forgetting writes.
 */
import { auditLineHash, auditSegmentName, type AuditRecord } from '@fleet/core/node';

type AuditEntryLike = Pick<AuditRecord, 'operationId' | 'aggregate' | 'operation'>;

/** Kept as a write's record: it accounts for writes that were refused (refused-appends.ts). */
const KEPT_AS_WRITES = new Set(['audit.refused-appends']);

export interface ClosedSegment {
  readonly name: string;
  readonly firstSeq: number;
  readonly firstPrev: string;
  /** It holds a write's record ({@link holdsWrite}). */
  readonly holdsWrites: boolean;
}

/**
 * A write's record: it carries an operation id (a counted read or refusal never does), or it
 * accounts for writes that could not be recorded.
 */
export function holdsWrite(entry: AuditEntryLike): boolean {
  return (
    (entry.operationId !== null && entry.aggregate === undefined) ||
    KEPT_AS_WRITES.has(entry.operation)
  );
}

export interface RotationInput {
  /** The active segment's first record, and whether it holds a write's record. */
  readonly active: {
    readonly firstSeq: number;
    readonly firstPrev: string;
    readonly holdsWrites: boolean;
  };
  /** Closed segments kept so far, oldest first. */
  readonly closed: readonly ClosedSegment[];
  /** The last record's seq and line hash. */
  readonly last: { readonly seq: number; readonly hash: string };
  readonly keepSegments: number;
  readonly maxSegments: number;
  /** Records up to this seq were released by the operator (0: none). */
  readonly releasedThroughSeq: number;
  readonly now: Date;
}

export interface RotationPlan {
  readonly closing: ClosedSegment;
  /** Closed segments after the rotation (the one closing included), oldest first. */
  readonly kept: readonly ClosedSegment[];
  readonly pruned: readonly ClosedSegment[];
  readonly record: AuditRecord;
  /** The record's line and newline, as the new segment holds it. */
  readonly bytes: Buffer;
  readonly hash: string;
  /** Set when the rotation must not happen: more closed segments than allowed, none prunable. */
  readonly full?: string;
}

/** How many of the oldest segments retention may prune: a prefix, stopping at unreleased writes. */
function prunableCount(all: readonly ClosedSegment[], input: RotationInput): number {
  let count = 0;
  while (all.length - count > input.keepSegments) {
    const segment = all[count] as ClosedSegment;
    const lastSeq = (all[count + 1]?.firstSeq ?? input.last.seq + 1) - 1;
    if (segment.holdsWrites && lastSeq > input.releasedThroughSeq) break;
    count += 1;
  }
  return count;
}

export function planRotation(input: RotationInput): RotationPlan {
  const closing: ClosedSegment = { name: auditSegmentName(input.active.firstSeq), ...input.active };
  const all = [...input.closed, closing];
  const pruned = all.slice(0, prunableCount(all, input));
  const kept = all.slice(pruned.length);
  // With nothing kept, the kept log starts at the rotation record itself.
  const retained = kept[0] ?? { firstSeq: input.last.seq + 1, firstPrev: input.last.hash };
  const prunedNote =
    pruned.length > 0
      ? `; pruned ${pruned.map((p) => p.name).join(', ')} (${input.keepSegments} kept)`
      : '';
  const record: AuditRecord = {
    seq: input.last.seq + 1,
    ts: input.now.toISOString(),
    prev: input.last.hash,
    operationId: null,
    client: null,
    operation: 'audit.rotate',
    paths: [],
    files: [],
    outcome: 'ok',
    code: null,
    detail: `segment ${closing.name} closed at seq ${input.last.seq}${prunedNote}`,
    segment: {
      previous: closing.name,
      retainedFromSeq: retained.firstSeq,
      retainedPrev: retained.firstPrev,
    },
  };
  const line = JSON.stringify(record);
  const oldest = kept[0];
  const full =
    kept.length > input.maxSegments && oldest !== undefined
      ? `the audit log holds ${kept.length} closed segments, more than its bound of ${input.maxSegments}, and the oldest (${oldest.name}) holds write records the operator has not released: release them with \`fleet audit verify --home DIR --release\` (docs/audit-log.md)`
      : undefined;
  return {
    ...(full === undefined ? {} : { full }),
    closing,
    kept,
    pruned,
    record,
    bytes: Buffer.from(`${line}\n`, 'utf8'),
    hash: auditLineHash(line),
  };
}
