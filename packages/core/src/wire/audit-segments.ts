/**
 * The node's audit log as segments (contract §15, docs/audit-log.md): the active segment
 * `audit.jsonl` and the closed ones `audit.<first seq, 12 digits>.jsonl` it rotated into, each
 * closed segment starting where the one before it ended and each later segment opening with a
 * rotation record (`segment`) that carries the previous head. The verifier reads them as one
 * sequence of lines, oldest first, and says where a problem is: which segment, which line.
 */
import { verifyAuditChain, type AuditVerification, type VerifyAuditOptions } from './audit.js';

/** The segment appends go to. */
export const AUDIT_ACTIVE_SEGMENT = 'audit.jsonl';

const CLOSED = /^audit\.(\d{12})\.jsonl$/;

/** The file name a segment whose first record has `firstSeq` is closed into. */
export function auditSegmentName(firstSeq: number): string {
  return `audit.${String(firstSeq).padStart(12, '0')}.jsonl`;
}

/** The first seq a closed segment's name says it holds; `null` for any other name. */
export function closedSegmentSeq(name: string): number | null {
  const match = CLOSED.exec(name);
  return match ? Number(match[1]) : null;
}

/** Closed segments among `names`, oldest first, then the active one if present. */
export function orderAuditSegments(names: readonly string[]): string[] {
  const closed = names
    .filter((name) => closedSegmentSeq(name) !== null)
    .sort((a, b) => (closedSegmentSeq(a) as number) - (closedSegmentSeq(b) as number));
  return names.includes(AUDIT_ACTIVE_SEGMENT) ? [...closed, AUDIT_ACTIVE_SEGMENT] : closed;
}

export interface AuditSegmentText {
  readonly name: string;
  readonly text: string;
}

function firstSeqOf(text: string): number | null {
  const newline = text.indexOf('\n');
  try {
    const seq = (JSON.parse(newline < 0 ? text : text.slice(0, newline)) as { seq?: unknown }).seq;
    return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : null;
  } catch {
    return null;
  }
}

/**
 * Verifies a segmented log (`segments` in the order of {@link orderAuditSegments}). On top of the
 * chain itself: only the active segment may end torn; a closed segment holds what its name says
 * (its first record's seq); the active segment is there whenever closed ones are (a rotation
 * writes the new segment before it closes the old one). Problems name their segment and line.
 */
export function verifyAuditSegments(
  segments: readonly AuditSegmentText[],
  options: VerifyAuditOptions = {},
): AuditVerification {
  const lines: string[] = [];
  const where: { name: string; start: number }[] = [];
  const extra: {
    line: number;
    kind: 'torn' | 'removed' | 'malformed';
    message: string;
    segment?: string;
    segmentLine?: number;
  }[] = [];
  let tornLast = false;
  segments.forEach((segment, index) => {
    const active = segment.name === AUDIT_ACTIVE_SEGMENT;
    where.push({ name: segment.name, start: lines.length + 1 });
    const parts = segment.text === '' ? [] : segment.text.split('\n');
    const torn = parts.length > 0 && parts[parts.length - 1] !== '';
    if (!torn) parts.pop();
    const named = closedSegmentSeq(segment.name);
    const first = firstSeqOf(segment.text);
    if (named !== null && first !== null && first !== named) {
      extra.push({
        line: lines.length + 1,
        kind: 'malformed',
        message: `${segment.name} starts at seq ${first}, not the seq its name says`,
      });
    }
    if (torn && !(active && index === segments.length - 1)) {
      extra.push({
        line: lines.length + parts.length,
        kind: 'torn',
        message: `${segment.name} ends in an incomplete line (a closed segment never does)`,
        segment: segment.name,
        segmentLine: parts.length,
      });
      parts.pop();
    } else if (torn) {
      tornLast = true;
    }
    lines.push(...parts);
  });
  const last = segments[segments.length - 1];
  if (segments.length > 0 && last?.name !== AUDIT_ACTIVE_SEGMENT) {
    extra.push({
      line: lines.length,
      kind: 'removed',
      message: `the active segment ${AUDIT_ACTIVE_SEGMENT} is missing after ${last?.name ?? ''}`,
    });
  } else if (segments.length > 1 && last?.text === '') {
    extra.push({
      line: lines.length,
      kind: 'removed',
      message: `the active segment ${AUDIT_ACTIVE_SEGMENT} is empty, but a rotation always opens it with a record`,
    });
  }
  const text = lines.length === 0 ? '' : `${lines.join('\n')}${tornLast ? '' : '\n'}`;
  const result = verifyAuditChain(text, options);
  const locate = (line: number) => {
    let at = where[0];
    for (const segment of where) if (segment.start <= line) at = segment;
    return at ? { segment: at.name, segmentLine: line - at.start + 1 } : {};
  };
  const problems = [...result.problems, ...extra]
    .sort((a, b) => a.line - b.line)
    .map((problem) => ({ ...locate(problem.line), ...problem }));
  return { ...result, ok: problems.length === 0, problems };
}
