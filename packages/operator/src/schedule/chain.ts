/**
 * The chain of a schedule's reports, pure (docs/scheduled-reports.md "Reports as evidence"):
 * the link the next report carries, and the verdict over what the reports folder holds held
 * against the head the operator's state directory keeps. The verdict's words follow `fleet audit
 * verify` (docs/audit-log.md): `intact` with the count and the first report's date, or the
 * first broken link with its file name; a head that is missing, or that reports were written
 * past, is flagged (`unanchored`), never passed over.
 */
import type { ReportChain, ReportChainSchedule } from '@fleet/core';

/** The newest report of a chain, as the operator's state directory keeps it. */
export interface ChainHead {
  readonly seq: number;
  /** The report's path in the repository, `/`-separated. */
  readonly file: string;
  readonly sha256: string;
  /** The report's own `generatedAt`. */
  readonly generatedAt: string;
}

/** One report JSON file of the folder, as read. */
export interface ReportEntry {
  /** Its path in the repository, `/`-separated: `reports/drift/2026-12-01/drift-2.json`. */
  readonly file: string;
  readonly sha256: string;
  /** Its `generatedAt` (`null`: none, or not JSON). */
  readonly generatedAt: string | null;
  /** Its link (`null`: before the chain — no `chain` field, or not a report). */
  readonly chain: ReportChain | null;
  /** The sha256 of each companion file of its set as found (`null`: the file is gone). */
  readonly companions: Readonly<Record<string, string | null>>;
}

export type ChainProblemKind =
  'missing' | 'edited' | 'reordered' | 'orphan' | 'head-missing' | 'head-stale';

export interface ChainProblem {
  readonly kind: ChainProblemKind;
  /** The file the problem is at (for `missing`: the file a link names). */
  readonly file: string;
  readonly seq: number | null;
  readonly message: string;
}

export type ChainStatus = 'intact' | 'broken' | 'unanchored' | 'empty';

export interface ChainVerdict {
  readonly schedule: ReportChainSchedule;
  readonly status: ChainStatus;
  /** Reports followed along the chain from its head. */
  readonly reports: number;
  /** The first chained report's `generatedAt`, when the chain was followed to its start. */
  readonly since: string | null;
  /** Reports without chain fields (written before chains, or by hand with --report-dir). */
  readonly beforeChain: number;
  /** The head held against (the kept one, or the newest chained report when none is kept). */
  readonly head: ChainHead | null;
  readonly problems: readonly ChainProblem[];
  /** What is worth knowing but breaks nothing (a link made without a kept head). */
  readonly notes: readonly string[];
}

/** The link of the next report of `schedule`: after the kept head, else after the folder's newest. */
export function nextLink(
  schedule: ReportChainSchedule,
  head: ChainHead | null,
  entries: readonly ReportEntry[],
  companions: Readonly<Record<string, string>>,
): ReportChain {
  if (head !== null) {
    const previous = { file: head.file, sha256: head.sha256 };
    return { schedule, seq: head.seq + 1, previous, anchor: 'head', companions: { ...companions } };
  }
  const newest = newestChained(schedule, entries);
  if (newest === undefined) {
    return { schedule, seq: 1, previous: null, anchor: 'start', companions: { ...companions } };
  }
  return {
    schedule,
    seq: newest.chain.seq + 1,
    previous: { file: newest.file, sha256: newest.sha256 },
    anchor: 'folder',
    companions: { ...companions },
  };
}

type Chained = ReportEntry & { readonly chain: ReportChain };

function chainedOf(schedule: ReportChainSchedule, entries: readonly ReportEntry[]): Chained[] {
  return entries.filter((e): e is Chained => e.chain !== null && e.chain.schedule === schedule);
}

function newestChained(schedule: ReportChainSchedule, entries: readonly ReportEntry[]) {
  let newest: Chained | undefined;
  for (const entry of chainedOf(schedule, entries)) {
    if (newest === undefined || entry.chain.seq > newest.chain.seq) newest = entry;
  }
  return newest;
}

/**
 * Holds the folder's reports of `schedule` against the kept head: follows the links from the head
 * back to the chain's start, each report's bytes against the sha256 its successor names and its
 * companions against its own record of them; stops at the first broken link. Chained reports past
 * the head, or not on the chain, are named.
 */
export function verifyReportChain(
  schedule: ReportChainSchedule,
  entries: readonly ReportEntry[],
  kept: ChainHead | null,
): ChainVerdict {
  const chained = chainedOf(schedule, entries);
  const beforeChain = entries.filter((e) => e.chain === null).length;
  const problems: ChainProblem[] = [];
  let head: ChainHead;
  if (kept === null) {
    const newest = newestChained(schedule, entries);
    if (newest === undefined) {
      const empty = { reports: 0, since: null, beforeChain, head: null, problems, notes: [] };
      return { schedule, status: 'empty', ...empty };
    }
    head = headOf(newest);
    problems.push({
      kind: 'head-missing',
      file: newest.file,
      seq: newest.chain.seq,
      message: `no head is kept for the ${schedule} chain: a deletion of its newest reports cannot be seen (fleet schedule verify --accept-current holds it to ${newest.file})`,
    });
  } else {
    head = kept;
    for (const past of chained.filter((e) => e.chain.seq > kept.seq)) {
      problems.push({
        kind: 'head-stale',
        file: past.file,
        seq: past.chain.seq,
        message: `written past the kept head (seq ${kept.seq}, ${kept.file}): not anchored — an interrupted run, or a report added by hand`,
      });
    }
  }
  const walk = followChain(entries, head);
  problems.push(...walk.problems);
  if (walk.complete) {
    const onChain = new Set(walk.visited);
    for (const entry of chained) {
      if (onChain.has(entry.file) || entry.chain.seq > head.seq) continue;
      problems.push({
        kind: 'orphan',
        file: entry.file,
        seq: entry.chain.seq,
        message: 'a chained report no link leads to: added, or copied in from elsewhere',
      });
    }
  }
  const broken = problems.some((p) => p.kind !== 'head-missing' && p.kind !== 'head-stale');
  return {
    schedule,
    status: broken ? 'broken' : problems.length > 0 ? 'unanchored' : 'intact',
    reports: walk.visited.length,
    since: walk.complete ? walk.since : null,
    beforeChain,
    head,
    problems,
    notes: walk.notes,
  };
}

function headOf(entry: Chained): ChainHead {
  return {
    seq: entry.chain.seq,
    file: entry.file,
    sha256: entry.sha256,
    generatedAt: entry.generatedAt ?? '',
  };
}

interface Walk {
  readonly visited: string[];
  readonly problems: ChainProblem[];
  readonly notes: string[];
  readonly complete: boolean;
  readonly since: string | null;
}

/** From the head back to the start: the files on the chain, and the first broken link. */
function followChain(entries: readonly ReportEntry[], head: ChainHead): Walk {
  const byFile = new Map(entries.map((e) => [e.file, e] as const));
  const bySha = new Map(entries.map((e) => [e.sha256, e] as const));
  const visited: string[] = [];
  const problems: ChainProblem[] = [];
  const notes: string[] = [];
  let link: { file: string; sha256: string } | null = { file: head.file, sha256: head.sha256 };
  let seq = head.seq;
  let since: string | null = null;
  while (link !== null) {
    const broken = brokenLink(byFile, bySha, link, seq);
    if (broken !== null) {
      problems.push(broken);
      return { visited, problems, notes, complete: false, since: null };
    }
    const entry = byFile.get(link.file) as Chained;
    visited.push(entry.file);
    problems.push(...companionProblems(entry));
    if (entry.chain.anchor === 'folder') {
      notes.push(
        `seq ${entry.chain.seq} (${entry.file}) was chained without a kept head, onto the newest report in the folder: a deletion before it could not be seen then`,
      );
    }
    since = entry.generatedAt;
    link = entry.chain.previous;
    seq -= 1;
    if (link === null && seq !== 0) {
      problems.push({
        kind: 'reordered',
        file: entry.file,
        seq: entry.chain.seq,
        message: `starts a chain at seq ${entry.chain.seq}, not 1`,
      });
      return { visited, problems, notes, complete: false, since: null };
    }
  }
  return { visited, problems, notes, complete: true, since };
}

/** What is wrong with the link to `link.file` at `seq`, or `null` when it holds. */
function brokenLink(
  byFile: ReadonlyMap<string, ReportEntry>,
  bySha: ReadonlyMap<string, ReportEntry>,
  link: { readonly file: string; readonly sha256: string },
  seq: number,
): ChainProblem | null {
  const entry = byFile.get(link.file);
  if (entry === undefined) {
    const moved = bySha.get(link.sha256);
    return moved === undefined
      ? { kind: 'missing', file: link.file, seq, message: 'the report is gone (deleted)' }
      : {
          kind: 'reordered',
          file: link.file,
          seq,
          message: `the report is no longer here: its bytes are at ${moved.file}`,
        };
  }
  if (entry.sha256 !== link.sha256) {
    const moved = bySha.get(link.sha256);
    if (moved === undefined && entry.chain !== null && entry.chain.seq > seq) {
      // The set was deleted and a later run took its free name (writeReportSet's lowest suffix).
      const message = `the report is gone (deleted): a later one (seq ${entry.chain.seq}) took its name`;
      return { kind: 'missing', file: link.file, seq, message };
    }
    return {
      kind: moved === undefined ? 'edited' : 'reordered',
      file: link.file,
      seq,
      message:
        moved === undefined
          ? 'changed since it was chained (edited, truncated or replaced)'
          : `another report's bytes are here: the one chained as seq ${seq} is at ${moved.file}`,
    };
  }
  if (entry.chain === null || entry.chain.seq !== seq) {
    return {
      kind: 'reordered',
      file: link.file,
      seq,
      message: `holds seq ${entry.chain?.seq ?? 'none'} where the chain expects ${seq}`,
    };
  }
  return null;
}

/** A companion (`md`, `html`) gone or changed since its report recorded it. */
function companionProblems(entry: Chained): ChainProblem[] {
  const out: ChainProblem[] = [];
  for (const [ext, sha256] of Object.entries(entry.chain.companions)) {
    const found = entry.companions[ext];
    if (found === sha256) continue;
    const file = entry.file.replace(/\.json$/, `.${ext}`);
    out.push({
      kind: found === null || found === undefined ? 'missing' : 'edited',
      file,
      seq: entry.chain.seq,
      message:
        found === null || found === undefined
          ? `the report's ${ext} is gone`
          : `the report's ${ext} changed since it was written`,
    });
  }
  return out;
}

/** The one-line verdict, in `fleet audit verify`'s words. */
export function chainVerdictLine(verdict: ChainVerdict): string {
  const count = `${verdict.reports} report${verdict.reports === 1 ? '' : 's'}`;
  const before = verdict.beforeChain > 0 ? `; ${verdict.beforeChain} before the chain` : '';
  const head = verdict.head ? `, head seq ${verdict.head.seq} (${verdict.head.file})` : '';
  switch (verdict.status) {
    case 'empty':
      return `no chained reports yet${before}`;
    case 'intact':
      return `intact  ${count} since ${verdict.since ?? '?'}${head}${before}`;
    case 'unanchored':
      return `UNANCHORED  ${count}${verdict.since ? ` since ${verdict.since}` : ''}${head}${before}`;
    case 'broken':
      return `BROKEN  ${count} followed${head}${before}`;
  }
}
