/**
 * History-aware classification (contract §8.2, docs/classification.md), pure. The rule: fleet
 * replaces without `--force` only what it can prove nobody changed by hand. A live file (its managed
 * part, redacted: template space) is compared with the host's desired view and with its *known
 * versions*: every version of the canonical file published in the repository's history, rendered
 * for the host, and every content fleet itself wrote at that path on that host (the node's record:
 * sha256s, like Debian ucf's hashfile). A backup is not a known version: it holds what was there
 * before fleet wrote, possibly a hand edit.
 *
 * - `current`: byte for byte equal to the desired view;
 * - `missing`: there is no file (or block) and fleet never wrote there;
 * - `deleted`: there is none, but the node's record says fleet wrote there — someone removed it;
 * - `stale`: equal, whole, to a known version (line endings aside, and then it says so) — safe to
 *   replace; it names the version: a commit, or fleet's own write (time, operation);
 * - `modified`: equal to no known version, but every line appears in one — lines deleted,
 *   reordered, duplicated, emptied, versions recombined: a hand change, described against the
 *   known version it is closest to;
 * - `diverged`: some lines appear in no known version — local edits, counted and listed.
 *
 * Lines are compared by content, without their terminators; the whole file by bytes. A file fleet
 * wrote is known by its whole bytes only (the node keeps hashes, not contents): its lines count as
 * known when a published version has them.
 */
import { diffArrays } from 'diff';

export type VersionSource =
  | { readonly kind: 'commit'; readonly commit: string; readonly date?: string }
  | {
      /** A content fleet wrote on the host (the node's record). */
      readonly kind: 'installed';
      readonly at: string;
      readonly operationId: string;
    };

/** One known version, already rendered for the host (template space). */
export interface KnownVersion {
  readonly source: VersionSource;
  readonly content: string;
}

/** One content fleet's writer put at a path, as the node recorded it. */
export interface FleetWrite {
  /** sha256 of the whole file's bytes as written. */
  readonly sha256: string;
  readonly at: string;
  readonly operationId: string;
  /** The mode it was written with (`"0644"`), when the node recorded one (contract §10.4). */
  readonly mode?: string;
}

export interface LocalLine {
  /** 1-based line number (in the live file, or in the version compared with for a deleted line). */
  readonly line: number;
  readonly text: string;
}

export type Classification =
  | { readonly state: 'current' }
  | { readonly state: 'missing' }
  | {
      readonly state: 'deleted';
      /** The newest write the node recorded at the path. */
      readonly lastWrite: FleetWrite;
    }
  | {
      readonly state: 'stale';
      /** The known version the live file equals (up to line endings). */
      readonly equals: VersionSource;
      /** True when the live file equals it except for its line endings. */
      readonly lineEndingsOnly: boolean;
    }
  | {
      readonly state: 'modified';
      /** The known version the live file is closest to, and is described against. */
      readonly comparedWith: VersionSource;
      /** Its lines missing from the live file (line numbers in that version). */
      readonly deleted: readonly LocalLine[];
      /** Live lines of that version out of its order (line numbers in the live file). */
      readonly moved: readonly LocalLine[];
      /** Live lines it lacks or has fewer times: repeated, or from other known versions. */
      readonly added: readonly LocalLine[];
    }
  | {
      readonly state: 'diverged';
      readonly localLines: number;
      readonly lines: readonly LocalLine[];
    };

/** Splits text into lines without terminators (`\n` or `\r\n`); a final terminator ends no line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** A known version's lines (without terminators). */
export interface KnownLines {
  readonly source: VersionSource;
  readonly lines: readonly string[];
}

/** What classification asks of the known versions (one canonical file, one host). */
export interface KnownSet {
  /** Whether a line (without terminator) appears in some known version. */
  has(line: string): boolean;
  /** The newest version whose lines equal `lines` exactly (line endings aside), if any. */
  versionEqualTo(lines: readonly string[]): KnownVersion | undefined;
  /** Every version's lines, newest first (to describe a `modified` file). */
  versions(): Iterable<KnownLines>;
}

/**
 * A known set over versions given in full (newest first). The history index builds a faster one
 * per host; this one is for callers holding a handful of versions.
 */
export class PublishedLines implements KnownSet {
  private readonly lines = new Set<string>();
  private readonly byNormalised = new Map<string, KnownVersion>();
  private readonly all: KnownLines[] = [];

  constructor(versions: Iterable<KnownVersion>) {
    for (const version of versions) {
      const lines = splitLines(version.content);
      for (const line of lines) this.lines.add(line);
      const normalised = lines.join('\n');
      // The first source listed wins: callers list the newest first.
      if (!this.byNormalised.has(normalised)) this.byNormalised.set(normalised, version);
      this.all.push({ source: version.source, lines });
    }
  }

  has(line: string): boolean {
    return this.lines.has(line);
  }

  versionEqualTo(lines: readonly string[]): KnownVersion | undefined {
    return this.byNormalised.get(lines.join('\n'));
  }

  versions(): Iterable<KnownLines> {
    return this.all;
  }
}

/** The live side of one file, as the node reported it. */
export interface LiveState {
  /** The managed part (template space), or `null` when there is none (no file, or no block). */
  readonly managed: string | null;
  /** sha256 of the whole live file's bytes (`null`: no file). */
  readonly sha256: string | null;
  /** The node's record of fleet's writes at the path, newest first (`[]`: none, or not kept). */
  readonly writes: readonly FleetWrite[];
}

const sameLines = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((line, i) => line === b[i]);

/**
 * Classifies one file. `desired` is the host's view now, with the commit it comes from; `known`
 * every published version (which includes the desired one's lines).
 */
export function classify(live: LiveState, desired: KnownVersion, known: KnownSet): Classification {
  if (live.managed === null) {
    const lastWrite = live.writes[0];
    // ucf: "Not replacing deleted config file" — fleet wrote it there, someone removed it.
    return lastWrite ? { state: 'deleted', lastWrite } : { state: 'missing' };
  }
  if (live.managed === desired.content) return { state: 'current' };
  const lines = splitLines(live.managed);
  const match =
    known.versionEqualTo(lines) ??
    (sameLines(lines, splitLines(desired.content)) ? desired : undefined);
  if (match && match.content === live.managed) {
    return { state: 'stale', equals: match.source, lineEndingsOnly: false };
  }
  const write = live.writes.find((w) => w.sha256 === live.sha256);
  if (write) {
    const equals = { kind: 'installed', at: write.at, operationId: write.operationId } as const;
    return { state: 'stale', equals, lineEndingsOnly: false };
  }
  if (match) return { state: 'stale', equals: match.source, lineEndingsOnly: true };
  const local: LocalLine[] = [];
  lines.forEach((text, index) => {
    if (!known.has(text)) local.push({ line: index + 1, text });
  });
  if (local.length > 0) return { state: 'diverged', localLines: local.length, lines: local };
  return describeModified(lines, desired, known);
}

/** The size of the multiset symmetric difference of `version` and the live lines (`counts`). */
function symmetricDifference(
  version: readonly string[],
  counts: ReadonlyMap<string, number>,
  liveLength: number,
): number {
  const used = new Map<string, number>();
  let common = 0;
  for (const line of version) {
    const n = used.get(line) ?? 0;
    if (n < (counts.get(line) ?? 0)) common += 1;
    used.set(line, n + 1);
  }
  return version.length + liveLength - 2 * common;
}

/**
 * A `modified` file described against the known version it is closest to (fewest lines to add and
 * remove; the newest on a tie; the desired view for an emptied file): the lines of that version it
 * lacks (deleted), those it has out of order (moved), and the known lines it adds (repeated, or
 * from other versions).
 */
function describeModified(
  lines: readonly string[],
  desired: KnownVersion,
  known: KnownSet,
): Classification {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  const desiredLines = splitLines(desired.content);
  let base: { source: VersionSource; lines: readonly string[] } | undefined;
  let best = Number.POSITIVE_INFINITY;
  for (const version of known.versions()) {
    // An emptied file is described against the desired view (as the history names it).
    if (lines.length === 0) {
      if (!sameLines(version.lines, desiredLines)) continue;
      base = version;
      break;
    }
    // The difference is at least the difference in length: most versions are ruled out here.
    if (Math.abs(version.lines.length - lines.length) >= best) continue;
    const distance = symmetricDifference(version.lines, counts, lines.length);
    if (distance < best) {
      best = distance;
      base = version;
    }
  }
  base ??= { source: desired.source, lines: desiredLines };
  const removed: LocalLine[] = [];
  const inserted: LocalLine[] = [];
  let baseLine = 0;
  let liveLine = 0;
  for (const part of diffArrays([...base.lines], [...lines])) {
    for (const text of part.value) {
      if (part.removed) removed.push({ line: (baseLine += 1), text });
      else if (part.added) inserted.push({ line: (liveLine += 1), text });
      else {
        baseLine += 1;
        liveLine += 1;
      }
    }
  }
  // A line removed in one place and inserted in another moved; the rest were deleted or added.
  const removedLeft = new Map<string, number>();
  for (const { text } of removed) removedLeft.set(text, (removedLeft.get(text) ?? 0) + 1);
  const moved: LocalLine[] = [];
  const added: LocalLine[] = [];
  for (const line of inserted) {
    const n = removedLeft.get(line.text) ?? 0;
    if (n > 0) {
      removedLeft.set(line.text, n - 1);
      moved.push(line);
    } else {
      added.push(line);
    }
  }
  const deleted: LocalLine[] = [];
  for (const line of [...removed].reverse()) {
    const n = removedLeft.get(line.text) ?? 0;
    if (n > 0) {
      removedLeft.set(line.text, n - 1);
      deleted.push(line);
    }
  }
  deleted.reverse();
  return { state: 'modified', comparedWith: base.source, deleted, moved, added };
}
