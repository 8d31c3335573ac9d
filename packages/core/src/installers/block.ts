/**
 * The managed block of a text file (contract §6 `kind: block`, §10.3, §10.4; reliability catalogue
 * H): pure, byte-exact text surgery on the lines between a begin and an end marker line. One
 * implementation for every domain that manages a block (harness-policy, files, third-party
 * plugins such as the gitconfig example), so they refuse the same damage the same way.
 *
 * Everything works on JavaScript strings decoded from UTF-8 *without* dropping a BOM
 * ({@link decodeUtf8}): decoding valid UTF-8 and encoding it again gives the same bytes, so
 * "string-exact" here is "byte-exact" on disk.
 *
 * The rules, all fail-closed (a refusal means nothing is written):
 * - a marker counts only as a whole line equal to the marker, its line ending aside;
 * - a line that mentions a marker in any other way (indented, trailing blank, other text, another
 *   case) is a *damaged* marker and refuses the file: it is never read as "no block", because
 *   appending a fresh block beside a lone or damaged marker is how blockinfile duplicates blocks
 *   (ansible#45848, #38417);
 * - END missing, BEGIN missing, two BEGINs or ENDs, END before BEGIN are refused — reversed
 *   markers are never "repaired" by deleting the span between them (ansible#47192);
 * - a marker line whose line ending differs from the file's other lines (CRLF on marker lines
 *   only) is refused: some other tool edited it, and tools that match `^marker$` disagree on it;
 * - a block body that itself contains a marker is refused (the file would not parse back).
 *
 * Error messages name line numbers, never line content: live files may hold resolved secrets
 * (catalogue 43).
 */
import { FleetError, type ErrorCode, type Problem } from '../errors.js';
import type { BlockMarkers } from '../interfaces/domain.js';

/** A line ending the block editor writes. */
export type Eol = '\n' | '\r\n';

const BOM = '\ufeff';

/** A file split around its block. `prefix + begin + body + end + suffix` is the text, exactly. */
export interface Block {
  /** Everything before the BEGIN line, a BOM included. */
  readonly prefix: string;
  /** The BEGIN marker line with its line ending. */
  readonly begin: string;
  /** The lines between the marker lines, each with its own line ending ('' when empty). */
  readonly body: string;
  /** The END marker line with its line ending ('' line ending when it ends the file). */
  readonly end: string;
  /** Everything after the END line. */
  readonly suffix: string;
  /** The line ending the block's lines are written with: the BEGIN line's own. */
  readonly eol: Eol;
}

interface Line {
  /** 1-based, for messages. */
  readonly number: number;
  readonly start: number;
  readonly content: string;
  readonly eol: '' | Eol;
  /** Index just past the line ending. */
  readonly end: number;
}

type LineKind = 'begin' | 'end' | 'damaged' | 'text';

/** Where a text's first line starts: after its BOM, if it has one. */
function firstLineStart(text: string): number {
  return text.startsWith(BOM) ? BOM.length : 0;
}

/**
 * The ending of the line that `newline` ends, given a position at or before that line's start:
 * CRLF when a CR of the same line comes right before it (`\n` and `\r\n` end lines; a lone `\r` is
 * content).
 */
function endingAt(text: string, newline: number, lineStart: number): Eol {
  return newline > lineStart && text.charCodeAt(newline - 1) === 0x0d ? '\r\n' : '\n';
}

/**
 * The distinctive part of a marker (`fleet:harness-policy:begin` of
 * `<!-- fleet:harness-policy:begin -->`, `fleet:gitconfig:begin` of `# fleet:gitconfig:begin`):
 * the marker without its comment syntax, searched case-insensitively on every line so that a
 * marker an editor or a person damaged is still recognised as one. A marker that is nothing but
 * comment syntax is its own token.
 */
function token(marker: string): string {
  const bare = marker
    .replace(/^\s*(<!--|\/\*|\/\/|--|[#;"%!]+)/, '')
    .replace(/(-->|\*\/)\s*$/, '')
    .trim()
    .toLowerCase();
  return bare === '' ? marker.trim().toLowerCase() : bare;
}

/** A line that is a marker, or mentions one (`damaged`); text lines are not kept. */
interface MarkerLine {
  readonly kind: Exclude<LineKind, 'text'>;
  readonly line: Line;
}

/**
 * The marker lines of `text` — begin, end and damaged ones — in one pass that makes a `Line` of
 * those alone: a drift reads a managed file of every host, and nearly all of its lines are text.
 * A line is damaged when its lower-cased content holds either marker's {@link token}; where
 * lower-casing kept every character in its place (no character grew, and no `Σ`, the one whose
 * lower case depends on its neighbours), that is looked up in the lower-cased text once, else
 * line by line.
 */
function markerLines(text: string, markers: BlockMarkers): MarkerLine[] {
  const tokens = [token(markers.begin), token(markers.end)];
  const lower = text.toLowerCase();
  const aligned = lower.length === text.length && !text.includes('\u03a3');
  // The next place at or after the current line where each token starts in `lower`.
  const next = tokens.map((t) => (aligned ? lower.indexOf(t) : -1));
  const mentions = (start: number, contentEnd: number): boolean => {
    if (!aligned) {
      const content = text.slice(start, contentEnd).toLowerCase();
      return tokens.some((t) => content.includes(t));
    }
    return tokens.some((t, i) => {
      let at = next[i] as number;
      if (at !== -1 && at < start) next[i] = at = lower.indexOf(t, start);
      return at !== -1 && at + t.length <= contentEnd;
    });
  };
  const is = (marker: string, start: number, contentEnd: number): boolean =>
    contentEnd - start === marker.length && text.startsWith(marker, start);
  const found: MarkerLine[] = [];
  let number = 0;
  let start = firstLineStart(text);
  while (start < text.length) {
    number += 1;
    const newline = text.indexOf('\n', start);
    const eol = newline === -1 ? '' : endingAt(text, newline, start);
    const contentEnd = newline === -1 ? text.length : newline + 1 - eol.length;
    const end = newline === -1 ? text.length : newline + 1;
    const kind = is(markers.begin, start, contentEnd)
      ? 'begin'
      : is(markers.end, start, contentEnd)
        ? 'end'
        : mentions(start, contentEnd)
          ? 'damaged'
          : 'text';
    if (kind !== 'text') {
      const content = text.slice(start, contentEnd);
      found.push({ kind, line: { number, start, content, eol, end } });
    }
    start = end;
  }
  return found;
}

/** The line endings of the lines in `[from, to)` of `text` (bounds on line starts). */
function endingsBetween(text: string, from: number, to: number): Set<Eol> {
  const endings = new Set<Eol>();
  for (let newline = text.indexOf('\n', from); newline !== -1 && newline < to;) {
    endings.add(endingAt(text, newline, from));
    newline = text.indexOf('\n', newline + 1);
  }
  return endings;
}

function refuse(
  code: ErrorCode,
  source: string,
  message: string,
  lines: readonly Line[],
): FleetError {
  const problems: Problem[] = lines.map((line) => ({ file: source, line: line.number, message }));
  const at = lines.length > 0 ? ` (line ${lines.map((l) => l.number).join(', ')})` : '';
  return new FleetError(code, `${source}: ${message}${at}; nothing written`, {
    problems,
    suggestions: [
      code === 'MARKER_IN_BODY'
        ? 'remove the marker lines from the block body (its canonical source in the repo)'
        : 'repair the markers by hand: exactly one begin line, then one end line, each alone on its line',
    ],
  });
}

function damagedWhy(line: Line, markers: BlockMarkers): string {
  const trimmed = line.content.trim();
  if (trimmed === markers.begin || trimmed === markers.end) {
    return 'a marker with leading or trailing whitespace on its line';
  }
  return 'a damaged marker (other text on its line, or a different spelling)';
}

/**
 * Finds the managed block, or `null` when the text has no marker at all. Throws `MARKERS_*` for
 * every damaged, unpaired, duplicated or reversed marker. `source` names the file in messages.
 */
export function findBlock(text: string, markers: BlockMarkers, source = 'file'): Block | null {
  const marked = markerLines(text, markers);
  const of = (kind: LineKind): Line[] => marked.filter((m) => m.kind === kind).map((m) => m.line);
  const damaged = of('damaged');
  const begins = of('begin');
  const ends = of('end');

  if (damaged.length > 0) {
    throw refuse('MARKERS_UNPAIRED', source, damagedWhy(damaged[0] as Line, markers), damaged);
  }
  if (begins.length === 0 && ends.length === 0) return null;
  if (begins.length > 1 || ends.length > 1) {
    throw refuse(
      'MARKERS_DUPLICATE',
      source,
      'more than one begin or end marker (duplicated or nested blocks)',
      [...begins, ...ends].sort((a, b) => a.number - b.number),
    );
  }
  const [begin] = begins;
  const [end] = ends;
  if (begin === undefined || end === undefined) {
    const lone = (begin ?? end) as Line;
    throw refuse(
      'MARKERS_UNPAIRED',
      source,
      begin === undefined
        ? 'an end marker without a begin marker'
        : 'a begin marker without an end marker',
      [lone],
    );
  }
  if (end.number < begin.number) {
    throw refuse('MARKERS_REVERSED', source, 'the end marker comes before the begin marker', [
      end,
      begin,
    ]);
  }

  // The marker lines' endings must be the file's own: those of the lines outside the block or,
  // in a file that is only the block, of its body; with neither, the two markers must agree.
  const outside = new Set([
    ...endingsBetween(text, firstLineStart(text), begin.start),
    ...endingsBetween(text, end.end, text.length),
  ]);
  const inside = endingsBetween(text, begin.end, end.start);
  const reference = [outside, inside].find((set) => set.size > 0);
  const odd =
    reference === undefined
      ? begin.eol !== '' && end.eol !== '' && begin.eol !== end.eol
        ? [end]
        : []
      : [begin, end].filter((l) => l.eol !== '' && !reference.has(l.eol));
  if (odd.length > 0) {
    throw refuse(
      'MARKERS_UNPAIRED',
      source,
      "a marker line whose line ending differs from the file's other lines",
      odd,
    );
  }

  return {
    prefix: text.slice(0, begin.start),
    begin: text.slice(begin.start, begin.end),
    body: text.slice(begin.end, end.start),
    end: text.slice(end.start, end.end),
    suffix: text.slice(end.end),
    eol: begin.eol as Eol, // never '': an end line follows the begin line
  };
}

/**
 * A body in template space: LF line endings, and a final line ending when it is not empty (a
 * block's last body line is always followed by the END line). `view` and `managed` both return
 * this form, so a CRLF file whose block says what the canonical says is `current`.
 */
export function normaliseBody(body: string): string {
  const lf = body.replace(/\r\n/g, '\n');
  return lf === '' || lf.endsWith('\n') ? lf : `${lf}\n`;
}

/** Refuses a body that mentions a marker: the spliced file would not parse back. */
export function assertNoMarkers(body: string, markers: BlockMarkers, source = 'block body'): void {
  const lines = markerLines(body, markers).map((m) => m.line);
  if (lines.length > 0) {
    throw refuse('MARKER_IN_BODY', source, 'the new block body contains a marker line', lines);
  }
}

/** The line ending a file already uses: its first one outside any block; LF when it has none. */
function fileEol(text: string): Eol {
  const start = firstLineStart(text);
  const newline = text.indexOf('\n', start);
  return newline === -1 ? '\n' : endingAt(text, newline, start);
}

/** Rewrites a body (in any line-ending style) into `eol`, with a final line ending. */
function bodyIn(body: string, eol: Eol): string {
  const lf = normaliseBody(body);
  return eol === '\n' ? lf : lf.replace(/\n/g, '\r\n');
}

/**
 * The new text of a file with `body` as its block. Outside the marker lines nothing changes, byte
 * for byte; the marker lines themselves are kept as they are. The body is written in the file's own
 * line-ending style. A file without a block gets one appended:
 * - an empty file (or just a BOM) becomes the block, after the BOM;
 * - a last line without a line ending gets the file's line ending first;
 * - then one blank line separates the text from the block, unless the text already ends with a
 *   blank line (existing blank lines are kept, never removed, and never stacked on).
 * Splicing the same body twice gives the same bytes as splicing it once.
 */
export function spliceBlock(
  liveText: string,
  body: string,
  markers: BlockMarkers,
  source = 'file',
): string {
  assertNoMarkers(body, markers, source);
  const block = findBlock(liveText, markers, source);
  if (block !== null) {
    return block.prefix + block.begin + bodyIn(body, block.eol) + block.end + block.suffix;
  }
  const eol = fileEol(liveText);
  const fresh = markers.begin + eol + bodyIn(body, eol) + markers.end + eol;
  const bom = liveText.startsWith(BOM) ? BOM : '';
  const text = liveText.slice(bom.length);
  if (text === '') return bom + fresh;
  const terminated = text.endsWith('\n') ? text : text + eol;
  const endsBlank = /(^|\n)\r?\n$/.test(terminated);
  return bom + terminated + (endsBlank ? '' : eol) + fresh;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Live bytes as text with the BOM kept (`ignoreBOM`) and invalid UTF-8 refused (`fatal`,
 * `ENCODING_INVALID`): with both, encoding the result again gives back exactly the bytes, which is
 * what makes a splice byte-exact.
 */
export function decodeUtf8(bytes: Uint8Array, path: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new FleetError(
      'ENCODING_INVALID',
      `${path} is not valid UTF-8; a block cannot be spliced into it`,
    );
  }
}
