/**
 * What `fleet audit show|verify` share (contract §5, §7): reading a node's audit log — from a node
 * home on this machine, or page by page through a host's controller (`POST /v1/audit`) — checking
 * its hash chain with core's pure `verifyAuditChain`, and printing records so that nothing in them
 * can drive the terminal or forge a line (catalogue E38). Loaded by the commands inside `run()`.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditHead, ControllerClient, FleetErrorLike } from '@fleet/core';
import { orderAuditSegments, verifyAuditChain, verifyAuditSegments } from '@fleet/core';

export const AUDIT_VERIFY_SCHEMA = 'fleet.audit-verify/v1';
export const AUDIT_SHOW_SCHEMA = 'fleet.audit/v1';

/** Lines asked for per request when paging through a controller (the route's maximum). */
const PAGE_LINES = 5000;

/** A node's audit log as read: its complete lines, whether it ends torn, and a trusted head. */
export interface NodeLog {
  /** Complete lines, verbatim, in file order; `firstLine` is the number of the first. */
  readonly lines: readonly string[];
  readonly firstLine: number;
  /** The file ends in an incomplete line (not in `lines`). */
  readonly torn: boolean;
  /** The head the controller holds (only through a controller; `null`: nothing appended yet). */
  readonly head?: AuditHead | null;
  /** A node home's segment files, oldest first (read directly, `--home`). */
  readonly segments?: readonly { readonly name: string; readonly text: string }[];
}

/** `<home>/.local/state/fleet`: where a controller on that home keeps its state. */
export function nodeStateDir(home: string): string {
  return join(home, '.local', 'state', 'fleet');
}

/** `<home>/.local/state/fleet/audit.jsonl`: the active segment of a controller on that home. */
export function nodeAuditPath(home: string): string {
  return join(nodeStateDir(home), 'audit.jsonl');
}

/** Splits a JSON-lines text into complete lines and an incomplete tail. */
export function splitLog(text: string): { lines: string[]; tail: string } {
  const lines = text.split('\n');
  const tail = lines.pop() ?? '';
  return { lines, tail };
}

/**
 * Reads a node home's log directly (for an operator at that node): every segment, oldest first,
 * and the head the controller recorded when it last closed (`audit.head.json`), if any. Absent:
 * empty.
 */
export async function readHomeLog(home: string): Promise<NodeLog & { path: string; tail: string }> {
  const dir = nodeStateDir(home);
  let names: string[] = [];
  try {
    names = orderAuditSegments(await readdir(dir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const segments: { name: string; text: string }[] = [];
  for (const name of names) segments.push({ name, text: await readFile(join(dir, name), 'utf8') });
  const lines: string[] = [];
  let tail = '';
  for (const segment of segments) {
    const split = splitLog(segment.text);
    lines.push(...split.lines);
    tail = split.tail;
  }
  const head = await readRecordedHead(dir);
  return {
    path: nodeAuditPath(home),
    lines,
    firstLine: 1,
    torn: tail !== '',
    tail,
    segments,
    ...(head === undefined ? {} : { head }),
  };
}

/** The head a controller wrote to `audit.head.json` when it last closed (or found its log changed). */
async function readRecordedHead(dir: string): Promise<AuditHead | undefined> {
  try {
    const value = JSON.parse(await readFile(join(dir, 'audit.head.json'), 'utf8')) as {
      seq?: unknown;
      sha256?: unknown;
    };
    return typeof value.seq === 'number' && value.seq > 0 && typeof value.sha256 === 'string'
      ? { seq: value.seq, sha256: value.sha256 }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a host's log through its controller, one request per page of {@link PAGE_LINES} lines;
 * `fromLine` > 1 starts there. The head is the first page's (taken before that page was read, so
 * every record up to it is in what follows even if the node appends meanwhile).
 */
export async function readHostLog(client: ControllerClient, fromLine = 1): Promise<NodeLog> {
  // A rotation that prunes the oldest segment while we page shifts every line number: seen as a
  // changed first line at the end, and read again (twice at most; a third change is reported).
  for (let attempt = 0; ; attempt += 1) {
    const log = await readPages(client, fromLine);
    if (fromLine !== 1 || attempt === 2 || log.lines.length === 0) return log;
    const again = await client.audit({ fromSeq: 1, limit: 1 });
    if (again.lines[0] === log.lines[0]) return log;
  }
}

async function readPages(client: ControllerClient, fromLine: number): Promise<NodeLog> {
  const lines: string[] = [];
  let fromSeq = fromLine;
  let head: AuditHead | null | undefined;
  for (;;) {
    const page = await client.audit({ fromSeq, limit: PAGE_LINES });
    if (head === undefined) head = page.head;
    lines.push(...page.lines);
    if (!page.more) return { lines, firstLine: fromLine, torn: page.torn, head };
    if (page.lines.length === 0) break; // a controller that says "more" but sends nothing
    fromSeq += page.lines.length;
  }
  return { lines, firstLine: fromLine, torn: false, head: head ?? null };
}

/**
 * The newest `limit` lines of a host, without reading the rest: the head says where they end, the
 * first kept record where the kept log starts (older segments may have been pruned).
 */
export async function readHostTail(client: ControllerClient, limit: number): Promise<NodeLog> {
  const probe = await client.audit({ fromSeq: 1, limit: 1 });
  const last = probe.head?.seq ?? 0;
  const first = seqOf(probe.lines[0]) ?? 1;
  const log = await readHostLog(client, Math.max(1, last - first + 1 - limit + 1));
  const skip = Math.max(0, log.lines.length - limit);
  return { ...log, lines: log.lines.slice(skip), firstLine: log.firstLine + skip };
}

export type ProblemKind = 'edited' | 'removed' | 'reordered' | 'torn' | 'malformed' | 'rewritten';

export interface VerifyProblem {
  /** The record's own seq when its line parses, else `null` (see `line`). */
  readonly seq: number | null;
  /** 1-based line in the log (every kept segment, oldest first). */
  readonly line: number;
  readonly kind: ProblemKind;
  readonly message: string;
  /** The segment file and the line in it (a node home read directly). */
  readonly segment?: string;
  readonly segmentLine?: number;
}

export interface HostVerdict {
  readonly host: string;
  /** The node home, for `--home`. */
  readonly home?: string;
  readonly status: 'intact' | 'broken' | 'unreachable' | 'error';
  readonly ok: boolean;
  /** Records that parsed. */
  readonly records: number;
  readonly head: AuditHead | null;
  readonly problems: readonly VerifyProblem[];
  /**
   * Records before the kept log, rotated out by retention (docs/audit-log.md "Retention"): seqs
   * `fromSeq`–`toSeq`, pruned by the rotation at `since`. Absent: the log starts at seq 1.
   */
  readonly rotated?: { readonly fromSeq: 1; readonly toSeq: number; readonly since: string };
  /** Heads this operator saw that are older than the kept log: they can no longer be checked. */
  readonly unchecked?: readonly AuditHead[];
  readonly error?: { readonly code: string; readonly message: string; readonly exitCode: number };
}

/** The rotation record that says where the kept log starts, as the verdict reports it. */
function rotatedOut(lines: readonly string[], firstSeq: number | null): HostVerdict['rotated'] {
  if (firstSeq === null || firstSeq <= 1) return undefined;
  let since: string | undefined;
  for (const line of lines) {
    try {
      const record = JSON.parse(line) as { ts?: unknown; segment?: { retainedFromSeq?: unknown } };
      if (record.segment?.retainedFromSeq === firstSeq && typeof record.ts === 'string') {
        since ??= record.ts;
      }
    } catch {
      // a line that does not parse is the chain verifier's business
    }
  }
  // Records missing with no rotation record saying so are the verifier's `removed`, not rotation.
  return since === undefined ? undefined : { fromSeq: 1, toSeq: firstSeq - 1, since };
}

/** How a verdict reads: never a bare `intact` when records were rotated out or heads unchecked. */
export function verdictWord(verdict: HostVerdict): string {
  const word = verdict.ok ? 'intact' : 'BROKEN';
  const notes: string[] = [];
  if (verdict.rotated) {
    notes.push(`rotated: 1–${verdict.rotated.toSeq}, since ${verdict.rotated.since}`);
  }
  if (verdict.unchecked && verdict.unchecked.length > 0) {
    notes.push(
      `${verdict.unchecked.length} head(s) you saw are older than the kept log and cannot be checked: seq ${verdict.unchecked.map((h) => h.seq).join(', ')}`,
    );
  }
  return notes.length === 0 ? word : `${word} (${notes.join('; ')})`;
}

function seqOf(line: string | undefined): number | null {
  if (line === undefined) return null;
  try {
    const seq = (JSON.parse(line) as { seq?: unknown }).seq;
    return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : null;
  } catch {
    return null;
  }
}

/**
 * The first seq missing at a `removed` problem: in a gap before `line`, the one after the record
 * before it; at a cut tail (the problem is on the last line), the one after that line's.
 */
function missingSeq(
  lines: readonly string[],
  line: number,
  unreadable: ReadonlySet<number>,
): number | null {
  let before = 0;
  for (let index = line - 2; index >= 0; index -= 1) {
    // A line core could not read as a record says nothing of the seqs around it, whatever it holds.
    const seq = unreadable.has(index + 1) ? null : seqOf(lines[index]);
    if (seq !== null) {
      before = seq;
      break;
    }
  }
  const here = seqOf(lines[line - 1]);
  if (here !== null && here > before + 1) return before + 1;
  return (here ?? before) + 1;
}

/**
 * Checks a whole log (read from line 1) with core's verifier: its segments when read from a home
 * (`verifyAuditSegments`), the trusted head when there is one, and the heads this operator saw
 * earlier (`seen`: a log without one of them was rewritten).
 */
export function verifyLog(
  host: string,
  log: NodeLog,
  seen: readonly AuditHead[] = [],
): HostVerdict {
  const options = { ...(log.head ? { head: log.head } : {}), seen };
  const result = log.segments
    ? verifyAuditSegments(log.segments, options)
    : verifyAuditChain(log.lines, options);
  const unreadable = new Set(
    result.problems
      .filter((problem) => problem.kind === 'malformed' || problem.kind === 'torn')
      .map((problem) => problem.line),
  );
  const problems: VerifyProblem[] = result.problems.map((problem) => ({
    seq:
      problem.kind === 'removed'
        ? missingSeq(log.lines, problem.line, unreadable)
        : unreadable.has(problem.line)
          ? null
          : seqOf(log.lines[problem.line - 1]),
    line: problem.line,
    kind: problem.kind,
    message: problem.message,
    ...(problem.segment === undefined
      ? {}
      : { segment: problem.segment, segmentLine: problem.segmentLine ?? problem.line }),
  }));
  if (log.torn && !log.segments) {
    const line = log.lines.length + 1;
    problems.push({
      seq: null,
      line,
      kind: 'torn',
      message: `line ${line} is incomplete (no newline)`,
    });
  }
  const rotated = rotatedOut(log.lines, result.firstSeq);
  const firstSeq = result.firstSeq ?? 1;
  // A head just before the kept start is still checked by core (its prev); older ones cannot be.
  const unchecked = seen.filter((head) => head.seq < firstSeq - 1);
  return {
    host,
    status: problems.length === 0 ? 'intact' : 'broken',
    ok: problems.length === 0,
    records: result.entries,
    head: result.head,
    problems,
    ...(rotated === undefined ? {} : { rotated }),
    ...(unchecked.length === 0 ? {} : { unchecked }),
  };
}

/** A host that could not be read: unreachable (exit 5) or refused (its own exit code). */
export function failedVerdict(host: string, error: FleetErrorLike): HostVerdict {
  return {
    host,
    status: error.code === 'HOST_UNREACHABLE' || error.exitCode === 5 ? 'unreachable' : 'error',
    ok: false,
    records: 0,
    head: null,
    problems: [],
    error: { code: error.code, message: error.message, exitCode: error.exitCode },
  };
}

/**
 * The exit code of a verification (contract §7): 6 when any chain is broken; else the first failed
 * host's (5 unreachable, 4 refused…); else 0.
 */
export function verifyExitCode(verdicts: readonly HostVerdict[]): number {
  if (verdicts.some((v) => v.status === 'broken')) return 6;
  const failed = verdicts.find((v) => v.error !== undefined);
  if (failed?.error) return failed.error.exitCode;
  return 0;
}

/**
 * Text from a log made safe for a terminal: core's `escapeControl`, plus the line breaks and tabs
 * it keeps and the bidirectional overrides that reorder what a reader sees.
 */
export function safeText(escapeControl: (text: string) => string, text: string): string {
  return escapeControl(text)
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\t/g, '\\t')
    .replace(
      /[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
      (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

/** Any value of a parsed record as safe text (`safeText` of its string form). */
export function safeValue(escapeControl: (text: string) => string, value: unknown): string {
  const text =
    value === null || value === undefined
      ? ''
      : typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : JSON.stringify(value);
  return safeText(escapeControl, text);
}

/** One parsed line, or what it was when it does not parse. */
export type ShownRecord = Record<string, unknown>;

export function parseLines(
  lines: readonly string[],
  firstLine: number,
  extra: Record<string, unknown> = {},
): ShownRecord[] {
  return lines.map((line, index) => {
    try {
      const value: unknown = JSON.parse(line);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        return { ...extra, ...(value as Record<string, unknown>) };
      }
    } catch {
      // shown raw below
    }
    return { ...extra, line: firstLine + index, malformed: true, raw: line };
  });
}
