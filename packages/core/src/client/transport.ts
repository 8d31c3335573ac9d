/**
 * One HTTP exchange with a controller, over the client's own HTTP/1.1 (`http1.ts`) on a `node:net`
 * or pinned `node:tls` socket: fetch offers no way to pin a self-signed certificate or to
 * guarantee nothing is written before the pin is checked, and `node:http`'s client machinery was
 * half of a fleet-wide verb's CPU time (contract §14). Every exchange has one deadline covering
 * connect, TLS, request and the whole response; a response is bounded in size, parsed as strict
 * JSON (no duplicate or prototype keys) and, for a non-2xx status, turned into the controller's
 * error.
 */
import type { Socket } from 'node:net';
import { FleetError } from '../errors.js';
import { parseStrictJson } from '../json.js';
import {
  FLEET_PROTOCOL_VERSION,
  PROTOCOL_HEADER,
  errorBodySchema,
  protocolOfHeader,
} from '../wire/protocol.js';
import {
  ControllerError,
  invalidResponse,
  protocolMismatch,
  timedOut,
  unreachable,
  wireError,
  type RequestTarget,
} from './errors.js';
import { openConnection, type Connecting, type HostConnections } from './connections.js';
import { AnswerReader, requestHead, type Answer } from './http1.js';
import { AUDIT_HEAD_HEADER, observeAuditHead, parseAuditHeadHeader } from './seen-heads.js';

export interface ExchangeOptions {
  readonly target: RequestTarget;
  readonly method: 'GET' | 'POST';
  /** Absolute path on the controller (`/v1/identity`). */
  readonly path: string;
  readonly token: string;
  /** JSON body for POST. */
  readonly body?: unknown;
  readonly tlsFingerprint?: string | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /**
   * Refuse a fleet answer in another protocol than this client's (`PROTOCOL_MISMATCH`, naming
   * both). False only for the routes any protocol may call (identity, health, runtime).
   */
  readonly checkProtocol?: boolean;
  /**
   * The client's keep-alive connections to this host (`connections.ts`). Without them the
   * exchange opens a connection of its own and closes it after the answer.
   */
  readonly connections?: HostConnections | undefined;
}

// A socket the controller closed while it sat idle in the pool fails the next request that picks
// it up before a byte of the answer arrives: that request never reached the controller, and is
// sent once more on a new socket (what Node's own client documents for `reusedSocket`).
const IDLE_CLOSE_ERRNOS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

export interface Exchange {
  readonly status: number;
  /** The parsed JSON body of a 2xx answer. */
  readonly body: unknown;
}

/** The request's bytes: its head, then its body (one write). */
function requestBytes(
  options: ExchangeOptions,
  host: string,
  pooled: boolean,
  payload: Buffer | undefined,
): Buffer {
  const headers: Record<string, string | number> = {
    accept: 'application/json',
    authorization: `Bearer ${options.token}`,
    [PROTOCOL_HEADER]: String(FLEET_PROTOCOL_VERSION),
    // Without the client's pool: one request per connection, nothing left open after it.
    connection: pooled ? 'keep-alive' : 'close',
  };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = payload.length;
  } else if (options.method === 'POST') headers['content-length'] = 0;
  const head = Buffer.from(requestHead(options.method, options.path, host, headers), 'latin1');
  return payload ? Buffer.concat([head, payload]) : head;
}

/** Where and what to send, checked before any socket is opened. */
interface Prepared {
  readonly hostname: string;
  readonly port: number;
  readonly fingerprint: string | undefined;
  readonly bytes: Buffer;
}

/**
 * The socket address, pin and request bytes of an exchange, or the error that refuses it (a URL
 * that is not one, https without a pin, another scheme, a pool that pins otherwise, a body that
 * cannot be sent).
 */
export function prepareExchange(options: ExchangeOptions): Prepared | FleetError {
  const { target } = options;
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return new FleetError('USAGE', `host ${target.host}: ${target.url} is not a URL`);
  }
  const secure = url.protocol === 'https:';
  if (secure && !options.tlsFingerprint) {
    // fleet.yaml's schema already requires the pin for https; this keeps direct callers honest.
    return new FleetError(
      'TLS_FINGERPRINT_MISMATCH',
      `host ${target.host}: https without a pinned tls.fingerprint is refused`,
    );
  }
  if (!secure && url.protocol !== 'http:') {
    return new FleetError('USAGE', `host ${target.host}: unsupported scheme ${url.protocol}`);
  }
  // A pool pins exactly one fingerprint, or none for plain http: never a token over a socket
  // that was not checked as this request requires.
  const pool = options.connections;
  const fingerprint = secure ? options.tlsFingerprint : undefined;
  if (pool && pool.tlsFingerprint !== fingerprint) {
    return new FleetError(
      'INTERNAL',
      `host ${target.host}: the connection pool does not match ${url.protocol}`,
    );
  }
  // URL keeps IPv6 literals bracketed; sockets want them bare. `Host` is the URL's host (with a
  // port other than the scheme's default), as Node's own client sends it.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  try {
    const payload =
      options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), 'utf8');
    const bytes = requestBytes(options, url.host, pool !== undefined, payload);
    return { hostname, port, fingerprint, bytes };
  } catch (error) {
    return new FleetError('USAGE', `host ${target.host}: ${(error as Error).message}`);
  }
}

/**
 * What a complete answer means: the parsed body of a 2xx fleet answer, else the error — another
 * protocol (when `checkProtocol`), the controller's own error, or RESPONSE_INVALID.
 */
export function answerOutcome(
  target: RequestTarget,
  answer: Answer,
  checkProtocol: boolean,
): Exchange | Error {
  const { status } = answer;
  const text = answer.body.toString('utf8');
  let body: unknown;
  let parseError: Error | undefined;
  try {
    body =
      text === ''
        ? undefined
        : parseStrictJson(text, `${target.host}'s answer`, 'RESPONSE_INVALID');
  } catch (error) {
    parseError = error as Error;
  }
  const fleetAnswer =
    !parseError &&
    body !== undefined &&
    (status < 200 || status > 299 ? errorBodySchema.safeParse(body).success : true);
  const peer = answer.headers.get(PROTOCOL_HEADER);
  if (
    checkProtocol &&
    fleetAnswer &&
    protocolOfHeader(peer) !== FLEET_PROTOCOL_VERSION &&
    // The node refused this client's version itself: its message names both already.
    (body as { error?: { code?: unknown } }).error?.code !== 'PROTOCOL_MISMATCH'
  ) {
    return protocolMismatch(target, peer);
  }
  if (status < 200 || status > 299) return wireError(target, status, parseError ? undefined : body);
  if (parseError || body === undefined) {
    return invalidResponse(target, parseError ? parseError.message : 'the answer is empty');
  }
  return { status, body };
}

/**
 * Sends one request and resolves with the parsed body of a 2xx answer. Rejects with a
 * `ControllerError`: `HOST_UNREACHABLE` (no answer, cut, or the deadline passed),
 * `TLS_FINGERPRINT_MISMATCH`, the controller's own code for a non-2xx answer, or
 * `RESPONSE_INVALID` for a 2xx answer that is not JSON or is too large.
 */
export function exchange(options: ExchangeOptions): Promise<Exchange> {
  const prepared = prepareExchange(options);
  if (prepared instanceof FleetError) return Promise.reject(prepared);
  return new Promise<Exchange>((resolve, reject) => {
    const run = new ExchangeRun(options, prepared, resolve, reject);
    const idle = options.connections?.takeIdle();
    if (idle) run.send(idle, true);
    else run.connect();
  });
}

/** One exchange in flight: its deadline, its socket, and how it settles (once). */
class ExchangeRun {
  private done = false;
  private socket: Socket | undefined;
  private connecting: Connecting | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: ExchangeOptions,
    private readonly prepared: Prepared,
    private readonly resolve: (value: Exchange) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.timer = setTimeout(
      () => this.finish(timedOut(options.target, options.timeoutMs)),
      options.timeoutMs,
    );
  }

  private finish(outcome: Exchange | Error): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (outcome instanceof Error) {
      this.connecting?.cancel(outcome);
      this.socket?.destroy();
      this.reject(outcome);
    } else this.resolve(outcome);
  }

  connect(): void {
    if (this.done) return;
    const { target, connections: pool } = this.options;
    const { hostname, port, fingerprint } = this.prepared;
    const made = pool
      ? pool.open(target, hostname, port)
      : openConnection(target, hostname, port, fingerprint);
    this.connecting = made;
    made.socket.then(
      (on) => {
        if (this.connecting === made) this.connecting = undefined;
        this.send(on, false);
      },
      (error: Error) => this.finish(error),
    );
  }

  /** Writes the request on `on` and reads its answer (`reused`: a socket from the idle pool). */
  send(on: Socket, reused: boolean): void {
    if (this.done) {
      on.destroy();
      return;
    }
    this.socket = on;
    const { target, connections: pool } = this.options;
    const reader = new AnswerReader(this.options.maxResponseBytes);
    const detach = (): void => {
      on.removeListener('data', onData);
      on.removeListener('end', onEnd);
      on.removeListener('error', onError);
      on.removeListener('close', onClose);
    };
    const settle = (result: ReturnType<AnswerReader['push']>): void => {
      if (result.state === 'partial') return;
      detach();
      if (result.state === 'invalid') {
        on.destroy();
        this.finish(
          /^the answer exceeds /.test(result.why)
            ? invalidResponse(target, result.why)
            : unreachable(target, new Error(result.why)),
        );
        return;
      }
      this.socket = undefined;
      if (pool && result.answer.keepAlive && !result.excess) pool.keep(on);
      else on.destroy();
      this.answered(result.answer);
    };
    const cut = (error: Error | undefined): void => {
      detach();
      on.destroy();
      // A reused socket that failed before any byte of the answer: the request never reached
      // the controller (it had closed the idle socket); once more on a new socket.
      const errno = error === undefined ? undefined : (error as NodeJS.ErrnoException).code;
      if (
        reused &&
        !reader.started &&
        (error === undefined || IDLE_CLOSE_ERRNOS.has(errno ?? ''))
      ) {
        this.connect();
        return;
      }
      this.finish(
        error instanceof ControllerError
          ? error
          : unreachable(target, error ?? new Error('connection closed before an answer')),
      );
    };
    const onData = (chunk: Buffer): void => settle(reader.push(chunk));
    const onEnd = (): void => {
      const result = reader.end();
      if (result.state === 'invalid' && !reader.started) cut(undefined);
      else settle(result);
    };
    const onError = (error: Error): void => cut(error);
    const onClose = (): void => cut(undefined);
    on.on('data', onData);
    on.once('end', onEnd);
    on.once('error', onError);
    on.once('close', onClose);
    on.write(this.prepared.bytes);
  }

  private answered(answer: Answer): void {
    const { target } = this.options;
    const head = parseAuditHeadHeader(answer.headers.get(AUDIT_HEAD_HEADER));
    if (head !== undefined) observeAuditHead(target.host, head);
    this.finish(answerOutcome(target, answer, this.options.checkProtocol === true));
  }
}
