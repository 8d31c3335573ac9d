/**
 * One HTTP exchange with a controller, over node:http / node:https directly: fetch offers no way
 * to pin a self-signed certificate or to guarantee nothing is written before the pin is checked.
 * Every exchange has one deadline covering connect, TLS, request and the whole response; a
 * response is bounded in size, parsed as strict JSON (no duplicate or prototype keys) and, for a
 * non-2xx status, turned into the controller's error.
 */
import http, { type ClientRequest, type IncomingMessage } from 'node:http';
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
  invalidResponse,
  protocolMismatch,
  timedOut,
  unreachable,
  wireError,
  type RequestTarget,
} from './errors.js';
import { connectPinned } from './tls.js';
import { AUDIT_HEAD_HEADER, observeAuditHead, parseAuditHeadHeader } from './audit-heads.js';

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
}

export interface Exchange {
  readonly status: number;
  /** The parsed JSON body of a 2xx answer. */
  readonly body: unknown;
}

/**
 * Sends one request and resolves with the parsed body of a 2xx answer. Rejects with a
 * `ControllerError`: `HOST_UNREACHABLE` (no answer, cut, or the deadline passed),
 * `TLS_FINGERPRINT_MISMATCH`, the controller's own code for a non-2xx answer, or
 * `RESPONSE_INVALID` for a 2xx answer that is not JSON or is too large.
 */
export function exchange(options: ExchangeOptions): Promise<Exchange> {
  const { target } = options;
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return Promise.reject(
      new FleetError('USAGE', `host ${target.host}: ${target.url} is not a URL`),
    );
  }
  const secure = url.protocol === 'https:';
  if (secure && !options.tlsFingerprint) {
    // fleet.yaml's schema already requires the pin for https; this keeps direct callers honest.
    return Promise.reject(
      new FleetError(
        'TLS_FINGERPRINT_MISMATCH',
        `host ${target.host}: https without a pinned tls.fingerprint is refused`,
      ),
    );
  }
  if (!secure && url.protocol !== 'http:') {
    return Promise.reject(
      new FleetError('USAGE', `host ${target.host}: unsupported scheme ${url.protocol}`),
    );
  }
  // URL keeps IPv6 literals bracketed; sockets want them bare.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  const payload =
    options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), 'utf8');

  return new Promise<Exchange>((resolve, reject) => {
    let done = false;
    let request: ClientRequest | undefined;
    let cancelConnect: ((reason: Error) => void) | undefined;
    const finish = (error: Error | null, value?: Exchange): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (error) {
        cancelConnect?.(error);
        request?.destroy();
        reject(error);
      } else resolve(value as Exchange);
    };
    const timer = setTimeout(() => finish(timedOut(target, options.timeoutMs)), options.timeoutMs);

    const send = (socket?: Socket): void => {
      if (done) {
        socket?.destroy();
        return;
      }
      const headers: Record<string, string | number> = {
        accept: 'application/json',
        authorization: `Bearer ${options.token}`,
        [PROTOCOL_HEADER]: String(FLEET_PROTOCOL_VERSION),
        // One request per connection: nothing is left open between verbs or after a timeout.
        connection: 'close',
      };
      if (payload) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = payload.length;
      }
      request = http.request({
        hostname,
        port,
        method: options.method,
        path: options.path,
        headers,
        // The pinned TLS socket (already verified), or a fresh plain TCP connection. With an
        // agent (even `agent: false`, which makes a new one) http ignores createConnection, so
        // the pinned socket goes without one.
        ...(socket ? { createConnection: () => socket } : { agent: false }),
      });
      request.on('error', (error) => finish(unreachable(target, error)));
      request.on('response', (response) => readResponse(response));
      request.end(payload);
    };

    const readResponse = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxResponseBytes) {
          finish(invalidResponse(target, `the answer exceeds ${options.maxResponseBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', (error) => finish(unreachable(target, error)));
      response.on('aborted', () =>
        finish(unreachable(target, new Error('the answer was cut short'))),
      );
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const head = parseAuditHeadHeader(response.headers[AUDIT_HEAD_HEADER]);
        if (head !== undefined) observeAuditHead(target.host, head);
        const text = Buffer.concat(chunks).toString('utf8');
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
        const peer = response.headers[PROTOCOL_HEADER];
        if (
          options.checkProtocol === true &&
          fleetAnswer &&
          protocolOfHeader(peer) !== FLEET_PROTOCOL_VERSION &&
          // The node refused this client's version itself: its message names both already.
          (body as { error?: { code?: unknown } }).error?.code !== 'PROTOCOL_MISMATCH'
        ) {
          finish(protocolMismatch(target, peer));
          return;
        }
        if (status < 200 || status > 299) {
          finish(wireError(target, status, parseError ? undefined : body));
          return;
        }
        if (parseError || body === undefined) {
          finish(invalidResponse(target, parseError ? parseError.message : 'the answer is empty'));
          return;
        }
        finish(null, { status, body });
      });
    };

    if (secure) {
      const pinned = connectPinned({
        target,
        hostname,
        port,
        fingerprint: options.tlsFingerprint as string,
      });
      cancelConnect = pinned.cancel;
      pinned.socket.then(
        (socket) => send(socket),
        (error: Error) => finish(error),
      );
    } else {
      send();
    }
  });
}
