/**
 * History-aware classification (contract §8.2), pure. A live file (redacted: template space) is
 * compared with the host's rendered canonical view and with every *published* version — each
 * version of the canonical file on the repo's main line rendered for this host, and each backup the
 * node holds. Lines are compared by content, without their terminators; the whole file by bytes:
 *
 * - `current`: byte for byte equal to the desired view;
 * - `missing`: there is no live file (or block);
 * - `stale`: it differs, but every live line appears in some published version — safe to
 *   replace. The result names the published version it equals (after line endings), or none (a
 *   recombination or a local deletion), and whether only line endings differ;
 * - `diverged`: some live lines appear in no published version — local edits, counted and listed.
 *
 * Line endings are handled exactly and predictably: a file equal to a published version except for
 * CRLF endings or a missing final newline is `stale` (its every line is published), never `current`
 * (its bytes differ) and never `diverged` (no line's content changed).
 */

export type VersionSource =
  | { readonly kind: 'commit'; readonly commit: string; readonly date?: string }
  | { readonly kind: 'backup'; readonly path: string };

/** One published version, already rendered for the host (template space). */
export interface PublishedVersion {
  readonly source: VersionSource;
  readonly content: string;
}

export interface LocalLine {
  /** 1-based line number in the live file. */
  readonly line: number;
  readonly text: string;
}

export type Classification =
  | { readonly state: 'current' }
  | { readonly state: 'missing' }
  | {
      readonly state: 'stale';
      /** The published version the live file equals (up to line endings), or null. */
      readonly equals: VersionSource | null;
      /** True when the live file equals a published version except for its line endings. */
      readonly lineEndingsOnly: boolean;
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

/** What classification asks of the published versions (one canonical file, one host). */
export interface PublishedSet {
  /** Whether a line (without terminator) appears in some published version. */
  has(line: string): boolean;
  /** The version whose lines equal `lines` exactly (line endings aside), if any. */
  versionEqualTo(lines: readonly string[]): PublishedVersion | undefined;
}

/**
 * The lines of every published version, hashed once. Build it once per (canonical file, host)
 * and classify any number of live files against it.
 */
export class PublishedLines implements PublishedSet {
  private readonly lines = new Set<string>();
  private readonly byNormalised = new Map<string, PublishedVersion>();

  constructor(versions: Iterable<PublishedVersion>) {
    for (const version of versions) {
      const lines = splitLines(version.content);
      for (const line of lines) this.lines.add(line);
      const normalised = lines.join('\n');
      // The first source listed wins: callers list the newest commit first.
      if (!this.byNormalised.has(normalised)) this.byNormalised.set(normalised, version);
    }
  }

  has(line: string): boolean {
    return this.lines.has(line);
  }

  /** The version whose lines equal `lines` exactly (line endings aside), if any. */
  versionEqualTo(lines: readonly string[]): PublishedVersion | undefined {
    return this.byNormalised.get(lines.join('\n'));
  }
}

/**
 * Classifies one live file. `desired` is the host's rendered canonical view now; `published` the
 * lines of every published version (which must include the desired view's own lines).
 */
export function classify(
  live: string | null,
  desired: string,
  published: PublishedSet,
): Classification {
  if (live === null) return { state: 'missing' };
  if (live === desired) return { state: 'current' };
  const lines = splitLines(live);
  const local: LocalLine[] = [];
  lines.forEach((text, index) => {
    if (!published.has(text)) local.push({ line: index + 1, text });
  });
  if (local.length > 0) return { state: 'diverged', localLines: local.length, lines: local };
  const match = published.versionEqualTo(lines);
  if (match)
    return { state: 'stale', equals: match.source, lineEndingsOnly: live !== match.content };
  const sameLinesAsDesired = splitLines(desired).join('\n') === lines.join('\n');
  return { state: 'stale', equals: null, lineEndingsOnly: sameLinesAsDesired };
}
