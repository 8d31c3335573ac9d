/**
 * The HTTP/1.1 the operator's client speaks with a controller, as data: the head of a request,
 * and an answer read incrementally from the bytes of a socket (RFC 9112). Pure: no socket here
 * (`transport.ts` owns them). Why not `node:http`: a fleet-wide verb makes one short exchange
 * with each of 1,000 hosts, and `node:http`'s client machinery (agent, outgoing and incoming
 * message streams, parser) was about half of the operator's CPU time for it (contract §14); the
 * controller's answers need none of it — every one is a JSON body with a `Content-Length`.
 *
 * Strict, and bounded, as the answer is untrusted: a status line `HTTP/1.x NNN`, header lines
 * `name: value` (no folding, no bare CR or LF, no NUL), the head at most {@link MAX_HEAD_BYTES},
 * one `Content-Length` (repeats must agree) of at most the caller's bound, or the `chunked`
 * transfer coding alone (never both; no other coding), no interim (1xx) answer. An answer with
 * neither is read to the end of the connection, as HTTP/1.1 says (Node's server answers so when
 * it refuses a request before the controller sees it), and ends the connection.
 */

/** Largest answer head accepted (Node's own client default, `--max-http-header-size`). */
export const MAX_HEAD_BYTES = 16 * 1024;

/** A header value HTTP can carry: visible ASCII, spaces, tabs and obs-text, nothing else. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5][0-9]{2})(?: [\t\x20-\x7e\x80-\xff]*)?$/;

/**
 * The head of a request: the request line, `Host`, then `headers` in order, then the blank line.
 * Throws a `TypeError` naming the header when a name or value could not be sent as it is (a
 * control character would end the header early: what was meant would not be what is read).
 */
export function requestHead(
  method: string,
  path: string,
  host: string,
  headers: Readonly<Record<string, string | number>>,
): string {
  if (!TOKEN.test(method) || !/^\/[\x21-\x7e]*$/.test(path)) {
    throw new TypeError('the request line holds a character HTTP cannot carry');
  }
  let head = `${method} ${path} HTTP/1.1\r\nHost: ${checkedValue('host', host)}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name))
      throw new TypeError(`the header name ${JSON.stringify(name)} is invalid`);
    head += `${name}: ${checkedValue(name, String(value))}\r\n`;
  }
  return `${head}\r\n`;
}

function checkedValue(name: string, value: string): string {
  if (!FIELD_VALUE.test(value)) {
    throw new TypeError(`the ${name} header holds a character HTTP cannot carry`);
  }
  return value;
}

/** A complete answer. */
export interface Answer {
  readonly status: number;
  /** Header values by lower-case name; repeats joined with `, ` (as Node's client does). */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
  /** Whether the connection may carry another request (HTTP/1.1, no `Connection: close`). */
  readonly keepAlive: boolean;
}

/** What reading more bytes gave: nothing yet, the answer, or why the bytes are no answer. */
export type ReadResult =
  | { readonly state: 'partial' }
  | { readonly state: 'complete'; readonly answer: Answer; readonly excess: boolean }
  | { readonly state: 'invalid'; readonly why: string };

interface Head {
  readonly status: number;
  readonly headers: Map<string, string>;
  /** The body's length; `'chunked'`; or `null`: read until the connection ends. */
  readonly length: number | 'chunked' | null;
  readonly keepAlive: boolean;
}

/** Parses a complete head (without its blank line), or says why it is no answer head. */
export function parseHead(text: string, maxBodyBytes: number): Head | string {
  const lines = text.split('\r\n');
  const status = STATUS_LINE.exec(lines[0] ?? '');
  if (!status) return 'the answer does not start with an HTTP/1.x status line';
  const code = Number(status[2]);
  if (code < 200) return `an interim answer (${code}) was not asked for`;
  const headers = new Map<string, string>();
  let length: number | null = null;
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name)) return 'a header line of the answer is malformed';
    const value = line.slice(colon + 1).replace(/^[\t ]+|[\t ]+$/g, '');
    if (!FIELD_VALUE.test(value))
      return `the ${name} header of the answer holds a control character`;
    const key = name.toLowerCase();
    if (key === 'content-length') {
      if (!/^[0-9]{1,15}$/.test(value)) return 'the Content-Length of the answer is not a number';
      const declared = Number(value);
      if (length !== null && declared !== length) return 'the answer has two Content-Lengths';
      if (declared > maxBodyBytes) return `the answer exceeds ${maxBodyBytes} bytes`;
      length = declared;
    }
    const before = headers.get(key);
    headers.set(key, before === undefined ? value : `${before}, ${value}`);
  }
  const coding = headers.get('transfer-encoding');
  if (coding !== undefined) {
    if (coding.toLowerCase() !== 'chunked')
      return `the answer's transfer coding ${coding} is not chunked`;
    if (length !== null) return 'the answer has both a Content-Length and a Transfer-Encoding';
  }
  const connection = (headers.get('connection') ?? '').toLowerCase().split(',');
  const close = connection.some((token) => token.trim() === 'close');
  // Without a length the body runs to the end of the connection (204 and 304 have none).
  if (length === null && coding === undefined && (code === 204 || code === 304)) length = 0;
  const framed = coding !== undefined ? 'chunked' : length;
  return {
    status: code,
    headers,
    length: framed,
    keepAlive: status[1] === '1' && !close && framed !== null,
  };
}

/** Largest chunk-size line (with its extensions) accepted in a chunked body. */
const MAX_CHUNK_LINE = 4 * 1024;

/**
 * The `chunked` transfer coding, decoded as bytes arrive (RFC 9112 §7.1): `<hex size>[;ext]CRLF`,
 * the data, CRLF, ... then a zero size, trailer lines (ignored) and a blank line.
 */
class ChunkedBody {
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  private line = '';
  private left = 0;
  private trailerBytes = 0;

  get finished(): boolean {
    return this.state === 'done';
  }

  /** Feeds `bytes`: the data they carry, how many of them were used, or why they are invalid. */
  take(bytes: Buffer): { data: Buffer[]; used: number } | string {
    const data: Buffer[] = [];
    let at = 0;
    while (at < bytes.length && this.state !== 'done') {
      if (this.state === 'data') {
        const part = bytes.subarray(at, at + this.left);
        data.push(part);
        at += part.length;
        this.left -= part.length;
        if (this.left === 0) this.state = 'data-end';
        continue;
      }
      const eol = bytes.indexOf(0x0a, at);
      const piece = bytes.toString('latin1', at, eol < 0 ? bytes.length : eol + 1);
      at = eol < 0 ? bytes.length : eol + 1;
      this.line += piece;
      if (this.line.length > MAX_CHUNK_LINE) return 'a chunk line of the answer is too long';
      if (eol < 0) continue;
      const line = this.line;
      this.line = '';
      if (!line.endsWith('\r\n') || line.slice(0, -2).includes('\r')) {
        return 'a chunk line of the answer does not end in CRLF';
      }
      const text = line.slice(0, -2);
      if (this.state === 'data-end') {
        if (text !== '') return 'a chunk of the answer is longer than its size';
        this.state = 'size';
      } else if (this.state === 'size') {
        const size = /^([0-9A-Fa-f]{1,12})(?:[\t ]*;[\t\x20-\x7e]*)?$/.exec(text);
        if (!size) return 'a chunk size of the answer is malformed';
        this.left = parseInt(size[1] as string, 16);
        this.state = this.left === 0 ? 'trailer' : 'data';
      } else {
        this.trailerBytes += line.length;
        if (this.trailerBytes > MAX_HEAD_BYTES) return 'the trailers of the answer are too long';
        if (text === '') this.state = 'done';
      }
    }
    return { data, used: at };
  }
}

/**
 * Reads one answer from the bytes of a connection as they arrive: `push` each chunk, `end` when the
 * peer closed. Holds the head's bytes until its blank line, then the body's chunks.
 */
export class AnswerReader {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private head: Head | undefined;
  private chunked: ChunkedBody | undefined;
  private body: Buffer[] = [];
  private bodyBytes = 0;
  private done = false;

  constructor(private readonly maxBodyBytes: number) {}

  /** Whether any byte of an answer arrived (a reused connection cut before one is retried). */
  get started(): boolean {
    return this.heldBytes > 0 || this.head !== undefined;
  }

  push(chunk: Buffer): ReadResult {
    if (this.done) return { state: 'invalid', why: 'bytes after the answer' };
    if (this.head === undefined) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      const bytes = this.held.length === 1 ? chunk : Buffer.concat(this.held, this.heldBytes);
      this.held = [bytes];
      const from = Math.max(0, this.heldBytes - chunk.length - 3);
      const end = bytes.indexOf('\r\n\r\n', from, 'latin1');
      if (end < 0 || end > MAX_HEAD_BYTES) {
        return this.heldBytes > MAX_HEAD_BYTES
          ? this.fail(`the answer's head exceeds ${MAX_HEAD_BYTES} bytes`)
          : { state: 'partial' };
      }
      const head = parseHead(bytes.toString('latin1', 0, end), this.maxBodyBytes);
      if (typeof head === 'string') return this.fail(head);
      this.head = head;
      if (head.length === 'chunked') this.chunked = new ChunkedBody();
      this.held = [];
      return this.take(bytes.subarray(end + 4));
    }
    return this.take(chunk);
  }

  /** The peer closed the connection: the answer, if it is complete now. */
  end(): ReadResult {
    if (this.done) return { state: 'invalid', why: 'the answer was already read' };
    if (this.head === undefined || this.head.length !== null) {
      return this.fail(this.started ? 'the answer was cut short' : 'no answer');
    }
    return this.complete(false);
  }

  private take(bytes: Buffer): ReadResult {
    const head = this.head as Head;
    if (this.chunked !== undefined) {
      const taken = this.chunked.take(bytes);
      if (typeof taken === 'string') return this.fail(taken);
      for (const part of taken.data) {
        const failed = this.add(part);
        if (failed) return failed;
      }
      return this.chunked.finished
        ? this.complete(taken.used < bytes.length)
        : { state: 'partial' };
    }
    const wanted = head.length === null ? Infinity : (head.length as number) - this.bodyBytes;
    const part = bytes.length > wanted ? bytes.subarray(0, wanted) : bytes;
    const failed = this.add(part);
    if (failed) return failed;
    if (head.length !== null && this.bodyBytes === head.length) {
      return this.complete(bytes.length > part.length);
    }
    return { state: 'partial' };
  }

  private add(part: Buffer): ReadResult | undefined {
    if (part.length === 0) return undefined;
    this.bodyBytes += part.length;
    if (this.bodyBytes > this.maxBodyBytes) {
      return this.fail(`the answer exceeds ${this.maxBodyBytes} bytes`);
    }
    this.body.push(part);
    return undefined;
  }

  private complete(excess: boolean): ReadResult {
    this.done = true;
    const head = this.head as Head;
    const body = this.body.length === 1 ? (this.body[0] as Buffer) : Buffer.concat(this.body);
    return {
      state: 'complete',
      answer: { status: head.status, headers: head.headers, body, keepAlive: head.keepAlive },
      excess,
    };
  }

  private fail(why: string): ReadResult {
    this.done = true;
    return { state: 'invalid', why };
  }
}
