/**
 * What a rotation does, decided as data (docs/audit-log.md, "Segments and their chaining"): the
 * name the active segment is closed into, which closed segments retention prunes, and the
 * `audit.rotate` record that opens the new segment — its `prev` the closed segment's head, its
 * `segment` field where the kept log starts. Pure; log.ts does the renames.
 */
import { auditLineHash, auditSegmentName, type AuditRecord } from '@fleet/core/node';

export interface ClosedSegment {
  readonly name: string;
  readonly firstSeq: number;
  readonly firstPrev: string;
}

export interface RotationInput {
  /** The active segment's first record. */
  readonly active: { readonly firstSeq: number; readonly firstPrev: string };
  /** Closed segments kept so far, oldest first. */
  readonly closed: readonly ClosedSegment[];
  /** The last record's seq and line hash. */
  readonly last: { readonly seq: number; readonly hash: string };
  readonly keepSegments: number;
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
}

export function planRotation(input: RotationInput): RotationPlan {
  const closing: ClosedSegment = { name: auditSegmentName(input.active.firstSeq), ...input.active };
  const all = [...input.closed, closing];
  const pruned = all.slice(0, Math.max(0, all.length - input.keepSegments));
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
  return {
    closing,
    kept,
    pruned,
    record,
    bytes: Buffer.from(`${line}\n`, 'utf8'),
    hash: auditLineHash(line),
  };
}
