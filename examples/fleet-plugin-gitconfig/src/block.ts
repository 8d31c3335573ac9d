/**
 * The fleet-managed block of a text file: pure, byte-exact text surgery on the lines between a
 * begin and an end marker line. Everything outside the marker lines — the user's own settings, a
 * BOM, CRLF or LF endings, a missing final newline — is preserved exactly.
 *
 * Texts are JavaScript strings decoded from UTF-8 without dropping a BOM (see `decodeUtf8`), so
 * decoding and encoding again gives back the same bytes: string-exact here is byte-exact on disk.
 *
 * Fail-closed rules (a refusal means nothing is written):
 * - a marker counts only as a whole line equal to it, the line ending aside;
 * - a line mentioning a marker any other way (indented, other text, another case) is a damaged
 *   marker and refuses the file — it is never read as "no block", since appending a fresh block
 *   beside a damaged one is how duplicated blocks are born;
 * - a lone marker, two begins or two ends, or an end before its begin is refused;
 * - a body that itself contains a marker line is refused (the file would not parse back).
 *
 * Messages name line numbers, never line content: a live file may hold resolved secrets.
 */
import { FleetError, type BlockMarkers, type ErrorCode, type Problem } from '@fleet/core';

/** A line ending this module writes. */
export type Eol = '\n' | '\r\n';

const BOM = '\ufeff';

/** A file split around its block: `prefix + begin + body + end + suffix` is the text, exactly. */
export interface Block {
  /** Everything before the begin line (a BOM included). */
  readonly prefix: string;
  /** The begin marker line, with its line ending. */
  readonly begin: string;
  /** The lines between the marker lines, each with its own ending (`''` when empty). */
  readonly body: string;
  /** The end marker line, with its line ending (none when it ends the file). */
  readonly end: string;
  /** Everything after the end line. */
  readonly suffix: string;
  /** The line ending of the begin line: the block's lines are written with it. */
  readonly eol: Eol;
}

interface Line {
  readonly number: number;
  readonly start: number;
  readonly content: string;
  readonly eol: '' | Eol;
  readonly end: number;
}

/** Splits after an optional BOM; `\n` and `\r\n` end lines, a lone `\r` is content. */
function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = text.startsWith(BOM) ? BOM.length : 0;
  while (start < text.length) {
    const newline = text.indexOf('\n', start);
    if (newline === -1) {
      lines.push({
        number: lines.length + 1,
        start,
        content: text.slice(start),
        eol: '',
        end: text.length,
      });
      break;
    }
    const crlf = newline > start && text[newline - 1] === '\r';
    lines.push({
      number: lines.length + 1,
      start,
      content: text.slice(start, crlf ? newline - 1 : newline),
      eol: crlf ? '\r\n' : '\n',
      end: newline + 1,
    });
    start = newline + 1;
  }
  return lines;
}

/** The distinctive part of a marker (`fleet:gitconfig:begin`), matched case-insensitively. */
function token(marker: string): string {
  return marker
    .replace(/^\s*[#;]+/, '')
    .trim()
    .toLowerCase();
}

type Kind = 'begin' | 'end' | 'damaged' | 'text';

function kindOf(line: Line, markers: BlockMarkers): Kind {
  if (line.content === markers.begin) return 'begin';
  if (line.content === markers.end) return 'end';
  const lower = line.content.toLowerCase();
  return lower.includes(token(markers.begin)) || lower.includes(token(markers.end))
    ? 'damaged'
    : 'text';
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
      'repair the markers by hand: one begin line, then one end line, each alone on its line',
    ],
  });
}

/**
 * The block of `text`, or `null` when it has no marker at all. Throws `MARKERS_UNPAIRED`,
 * `MARKERS_DUPLICATE` or `MARKERS_REVERSED` for damaged, lone, repeated or reversed markers.
 * `source` names the file in messages.
 */
export function findBlock(text: string, markers: BlockMarkers, source = 'file'): Block | null {
  const lines = splitLines(text);
  const of = (kind: Kind): Line[] => lines.filter((line) => kindOf(line, markers) === kind);
  const damaged = of('damaged');
  const begins = of('begin');
  const ends = of('end');
  if (damaged.length > 0) {
    throw refuse(
      'MARKERS_UNPAIRED',
      source,
      'a damaged marker (other text on its line, or another spelling)',
      damaged,
    );
  }
  if (begins.length === 0 && ends.length === 0) return null;
  if (begins.length > 1 || ends.length > 1) {
    const all = [...begins, ...ends].sort((a, b) => a.number - b.number);
    throw refuse('MARKERS_DUPLICATE', source, 'more than one begin or end marker', all);
  }
  const [begin] = begins;
  const [end] = ends;
  if (begin === undefined || end === undefined) {
    const why =
      begin === undefined
        ? 'an end marker without a begin marker'
        : 'a begin marker without an end marker';
    throw refuse('MARKERS_UNPAIRED', source, why, [(begin ?? end) as Line]);
  }
  if (end.number < begin.number) {
    throw refuse('MARKERS_REVERSED', source, 'the end marker comes before the begin marker', [
      end,
      begin,
    ]);
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
 * A body in template space: LF endings and a final newline unless empty. The installer's `view`
 * and `managed` both return this form, so a CRLF file whose block says what the canonical says is
 * current.
 */
export function normaliseBody(body: string): string {
  const lf = body.replace(/\r\n/g, '\n');
  return lf === '' || lf.endsWith('\n') ? lf : `${lf}\n`;
}

/** Refuses (`MARKER_IN_BODY`) a body that mentions a marker. */
export function assertNoMarkers(body: string, markers: BlockMarkers, source = 'block body'): void {
  const lines = splitLines(body).filter((line) => kindOf(line, markers) !== 'text');
  if (lines.length > 0) {
    throw refuse('MARKER_IN_BODY', source, 'the block body contains a marker line', lines);
  }
}

function fileEol(text: string): Eol {
  const first = splitLines(text).find((line) => line.eol !== '');
  return first === undefined ? '\n' : (first.eol as Eol);
}

function bodyIn(body: string, eol: Eol): string {
  const lf = normaliseBody(body);
  return eol === '\n' ? lf : lf.replace(/\n/g, '\r\n');
}

/**
 * The text of a file with `body` as its block. Outside the marker lines nothing changes; the body
 * is written in the block's own line-ending style. A file without a block gets one appended, after
 * one blank line (git applies the last value it reads, so fleet's block comes last); an empty file
 * becomes just the block. Splicing the same body twice gives the same text as splicing it once.
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
 * Live bytes as text with the BOM kept and invalid UTF-8 refused (`ENCODING_INVALID`): encoding
 * the result again gives back exactly the bytes, which makes the splice byte-exact.
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
