/**
 * The audit log's files in the state directory (docs/audit-log.md): the active segment
 * `audit.jsonl`, closed segments `audit.<first seq>.jsonl`, `audit.jsonl.next` (a rotation in
 * progress), `audit.jsonl.torn-<ts>` (a torn tail moved aside) and `audit.head.json` (the head the
 * controller last held, written when it closes and when it finds the log changed under it).
 *
 * Reading them at start — finishing an interrupted rotation, moving a torn tail aside, verifying
 * the whole chain — lives here; appending lives in log.ts.
 */
import { constants } from 'node:fs';
import { open, readFile, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from '@fleet/core/zod';
import {
  AUDIT_ACTIVE_SEGMENT,
  closedSegmentSeq,
  orderAuditSegments,
  parseStrictJson,
  sha256Schema,
  timestampSchema,
  verifyAuditSegments,
  type AuditHead,
  type AuditSegmentText,
  type AuditVerification,
} from '@fleet/core/node';
import { utcStamp } from '../backups.js';
import { createExclusive, fsyncDir, writeFileAtomic } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { holdsWrite, type ClosedSegment } from './rotation.js';

export const NEXT_SEGMENT = `${AUDIT_ACTIVE_SEGMENT}.next`;
export const HEAD_FILE = 'audit.head.json';
/**
 * The operator's say (docs/audit-log.md, "Retention"): segments holding write records up to
 * `throughSeq` may be pruned by retention. Written by `fleet audit verify --home DIR --release`
 * after a clean verify, with the head it verified.
 */
export const RELEASE_FILE = 'audit.release.json';

export const releaseFileSchema = z.strictObject({
  throughSeq: z.number().int().nonnegative(),
  sha256: sha256Schema,
  ts: timestampSchema,
});
export type ReleaseFile = z.infer<typeof releaseFileSchema>;

/** The operator's release, if any; one that does not validate releases nothing. */
export async function readReleaseFile(dir: string): Promise<ReleaseFile | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, RELEASE_FILE), 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = releaseFileSchema.safeParse(
    parseStrictJson(text, RELEASE_FILE, 'RECOVERY_REQUIRED'),
  );
  return parsed.success ? parsed.data : undefined;
}

const headFileSchema = z.strictObject({
  seq: z.number().int().nonnegative(),
  sha256: sha256Schema,
  ts: timestampSchema,
  /** Why it was written: `closed`, or what the controller found changed under it. */
  reason: z.string(),
});
export type HeadFile = z.infer<typeof headFileSchema>;

export interface SegmentOnDisk extends AuditSegmentText {
  /**
   * The first record's seq and prev, and where a rotation record there says the kept log starts
   * (`null`: the segment is empty or its first line unreadable).
   */
  readonly first: {
    readonly seq: number;
    readonly prev: string;
    readonly retainedFromSeq?: number;
  } | null;
}

/** The segment files of `dir`, oldest first (the active one last), with their text. */
export async function readSegments(dir: string): Promise<SegmentOnDisk[]> {
  const names = orderAuditSegments(await readdir(dir));
  const out: SegmentOnDisk[] = [];
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8');
    out.push({ name, text, first: firstRecord(text) });
  }
  return out;
}

function firstRecord(text: string): SegmentOnDisk['first'] {
  const newline = text.indexOf('\n');
  if (newline < 0) return null;
  try {
    const value = JSON.parse(text.slice(0, newline)) as {
      seq?: unknown;
      prev?: unknown;
      segment?: { retainedFromSeq?: unknown };
    };
    if (typeof value.seq !== 'number' || typeof value.prev !== 'string') return null;
    const retained = value.segment?.retainedFromSeq;
    return typeof retained === 'number'
      ? { seq: value.seq, prev: value.prev, retainedFromSeq: retained }
      : { seq: value.seq, prev: value.prev };
  } catch {
    return null;
  }
}

/**
 * A rotation writes the new segment as `audit.jsonl.next`, renames the active one to its closed
 * name, then renames `.next` into place. Found at start: with the active segment still there the
 * rotation never happened (`.next` is dropped); without it, the rotation is finished.
 */
export async function finishRotation(dir: string): Promise<'none' | 'dropped' | 'finished'> {
  const names = await readdir(dir);
  if (!names.includes(NEXT_SEGMENT)) return 'none';
  if (names.includes(AUDIT_ACTIVE_SEGMENT)) {
    await unlink(join(dir, NEXT_SEGMENT));
    await fsyncDir(dir, 'state directory');
    return 'dropped';
  }
  await rename(join(dir, NEXT_SEGMENT), join(dir, AUDIT_ACTIVE_SEGMENT));
  await fsyncDir(dir, 'state directory');
  return 'finished';
}

/**
 * The bytes after the last whole record of `text` (a crash mid-append, catalogue 27: no newline,
 * or a last line that is not JSON, NUL bytes included); `''` when it ends cleanly.
 */
export function tornTail(text: string): string {
  if (text === '') return '';
  const end = text.endsWith('\n') ? text.length - 1 : text.length;
  const start = text.lastIndexOf('\n', end - 1) + 1;
  const last = text.slice(start, end);
  if (text.endsWith('\n')) {
    try {
      JSON.parse(last);
      return '';
    } catch {
      return text.slice(start);
    }
  }
  return text.slice(start);
}

/** Moves `tail` aside to `audit.jsonl.torn-<ts>` (never over an existing file); returns the name. */
export async function setTornAside(dir: string, tail: string, now: Date): Promise<string> {
  const base = `${AUDIT_ACTIVE_SEGMENT}.torn-${utcStamp(now)}`;
  for (let n = 0; ; n += 1) {
    const name = n === 0 ? base : `${base}-${n}`;
    try {
      await createExclusive(join(dir, name), tail);
      return name;
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw error;
    }
  }
}

export async function readHeadFile(dir: string): Promise<HeadFile | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, HEAD_FILE), 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = headFileSchema.safeParse(parseStrictJson(text, HEAD_FILE, 'RECOVERY_REQUIRED'));
  return parsed.success ? parsed.data : undefined;
}

export async function writeHeadFile(dir: string, head: HeadFile): Promise<void> {
  await writeFileAtomic(join(dir, HEAD_FILE), `${JSON.stringify(head)}\n`);
}

/** The whole log verified, held against the head file when there is one. */
export function verifySegments(
  segments: readonly SegmentOnDisk[],
  head: AuditHead | undefined,
): AuditVerification {
  const trusted = head && head.seq > 0 ? { head } : {};
  return verifyAuditSegments(segments, trusted);
}

/** One line for health and for the error of a refused write: where the chain breaks, and how. */
export function describeBreak(result: AuditVerification): string {
  const [first, ...rest] = result.problems;
  if (first === undefined) return 'the audit chain is intact';
  const where = first.segment ? `${first.segment} line ${first.segmentLine}` : `line ${first.line}`;
  const more =
    rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
  return `the audit chain is broken at ${where}: ${first.kind}: ${first.message}${more}`;
}

/**
 * Closed segments whose records all come before where the newest rotation record says the kept
 * log starts: pruned by retention, left by a crash before they were removed.
 */
export function prunable(segments: readonly SegmentOnDisk[]): string[] {
  const retainedFromSeq = Math.max(1, ...segments.map((s) => s.first?.retainedFromSeq ?? 1));
  const closed = segments.filter((segment) => closedSegmentSeq(segment.name) !== null);
  const out: string[] = [];
  closed.forEach((segment, index) => {
    const next = closed[index + 1] ?? segments.find((s) => s.name === AUDIT_ACTIVE_SEGMENT);
    const nextSeq = next?.first?.seq ?? closedSegmentSeq(next?.name ?? '') ?? null;
    if (nextSeq !== null && nextSeq <= retainedFromSeq) out.push(segment.name);
  });
  return out;
}

/**
 * Whether a segment's text holds a write's record (rotation.ts `holdsWrite`): a record with an
 * operation id and no count. Read per line; a line that does not parse counts as a write, so a
 * damaged segment is never pruned on a guess.
 */
export function textHoldsWrite(text: string): boolean {
  for (const line of text.split('\n')) {
    if (!line.includes('"operationId":"') && !line.includes('"operation":"audit.')) continue;
    try {
      const record = JSON.parse(line) as Parameters<typeof holdsWrite>[0];
      if (holdsWrite(record)) return true;
    } catch {
      return true;
    }
  }
  return false;
}

export interface Inspection {
  readonly segments: readonly SegmentOnDisk[];
  readonly closed: readonly ClosedSegment[];
  /** The file a torn tail was moved to, if there was one. */
  readonly tornMovedTo: string | undefined;
  /** Why the log must not be written to (a broken chain, an unreadable head file). */
  readonly broken: string | undefined;
  /**
   * The head to hold: the verified last record (with its line, what a cut back is checked
   * against) — or, for a broken log, the head last recorded, which readers are answered.
   */
  readonly head: { readonly seq: number; readonly hash: string; readonly line: Buffer } | null;
  /** The active segment's first record, and its size once a torn tail is set aside. */
  readonly active: { readonly firstSeq: number; readonly firstPrev: string } | null;
  readonly activeBytes: number;
  /** The active segment holds a write's record (retention keeps it). */
  readonly activeHoldsWrites: boolean;
}

/**
 * Start-up (docs/audit-log.md, "What fails closed"): an interrupted rotation finished, a torn
 * last line moved aside (catalogue 27), every segment read and the whole chain verified against
 * the head the controller recorded when it last stopped.
 */
export async function inspectLog(dir: string, now: Date): Promise<Inspection> {
  await finishRotation(dir);
  let segments = await readSegments(dir);
  const activeIndex = segments.findIndex((s) => s.name === AUDIT_ACTIVE_SEGMENT);
  let tornMovedTo: string | undefined;
  const activeText = segments[activeIndex]?.text;
  if (activeText !== undefined) {
    const tail = tornTail(activeText);
    if (tail !== '') {
      tornMovedTo = await setTornAside(dir, tail, now);
      const kept = activeText.slice(0, activeText.length - tail.length);
      const handle = await open(
        join(dir, AUDIT_ACTIVE_SEGMENT),
        constants.O_RDWR | constants.O_NOFOLLOW,
      );
      try {
        await handle.truncate(Buffer.byteLength(kept));
        await handle.sync();
      } finally {
        await handle.close();
      }
      segments = segments.map((s, i) => (i === activeIndex ? { ...s, text: kept } : s));
    }
  }
  const closed = segments.flatMap((s) => {
    const firstSeq = closedSegmentSeq(s.name);
    return firstSeq === null || s.first === null
      ? []
      : [{ name: s.name, firstSeq, firstPrev: s.first.prev, holdsWrites: textHoldsWrite(s.text) }];
  });
  const text = segments[activeIndex]?.text ?? '';
  const first = segments[activeIndex]?.first ?? null;
  const base = {
    segments,
    closed,
    tornMovedTo,
    active: first === null ? null : { firstSeq: first.seq, firstPrev: first.prev },
    activeBytes: Buffer.byteLength(text),
    activeHoldsWrites: textHoldsWrite(text),
  };
  let headFile: HeadFile | undefined;
  try {
    headFile = await readHeadFile(dir);
  } catch (error) {
    const broken = `the controller's head file is unreadable (${(error as Error).message})`;
    return { ...base, broken, head: null };
  }
  const result = verifySegments(segments, headFile);
  if (!result.ok) {
    const known = headFile && headFile.seq > 0 ? headFile : result.head;
    const head = known ? { seq: known.seq, hash: known.sha256, line: Buffer.alloc(0) } : null;
    return { ...base, broken: describeBreak(result), head };
  }
  const lastLine = text.slice(text.lastIndexOf('\n', text.length - 2) + 1);
  const head =
    result.head === null
      ? null
      : { seq: result.head.seq, hash: result.head.sha256, line: Buffer.from(lastLine, 'utf8') };
  return { ...base, broken: undefined, head };
}
