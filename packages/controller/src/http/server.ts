/**
 * The controller's HTTP or HTTPS server around the request pipeline (pipeline.ts): its timeouts,
 * the connection budget applied before a byte is read (budget.ts), and the raw answers to what
 * never reaches the pipeline — a connection over the budget, a request Node's parser rejects —
 * and where it may listen and which `Host` values name it.
 */
import type * as NodeHttp from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { FLEET_PROTOCOL_VERSION, FleetError, PROTOCOL_HEADER } from '@fleet/core/node';
import type { AuditLog } from '../audit/log.js';
import type { Limits } from '../runtime.js';
import { ConnectionBudget } from './budget.js';

// node:http through `require`: imported as an ES module on Node.js ≥ 22 it loads undici, whose
// WebSocket classes its module namespace reads from lazy getters — about 50 ms of every
// controller start (nodejs/node#57649, #59686). `require` does not build that namespace.
const { createServer: createHttpServer } = createRequire(import.meta.url)(
  'node:http',
) as typeof NodeHttp;

/** PEM certificate and key: the server speaks https. */
export interface TlsMaterial {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

function isLoopback(bind: string): boolean {
  return bind === 'localhost' || bind === '::1' || bind.startsWith('127.');
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/**
 * Plain HTTP carries the bearer token in clear: off loopback it is refused, with the fix named
 * (contract §5: `--tls-cert F --tls-key F`).
 */
export function checkBind(bind: string, tls: boolean): void {
  if (isLoopback(bind) || tls) return;
  throw new FleetError(
    'USAGE',
    `--bind ${bind} would serve plain HTTP beyond this machine, with bearer tokens in clear: refused`,
    {
      suggestions: [
        'serve https: add --tls-cert cert.pem --tls-key key.pem (and pin its fingerprint as tls.fingerprint in fleet.yaml)',
        'or bind 127.0.0.1 and reach it through an SSH tunnel',
      ],
    },
  );
}

/**
 * The `Host` values a request may carry (DNS rebinding, catalogue 5): the bound address — or,
 * for a wildcard bind, every address of this machine's interfaces — and its host name, each with
 * the port, plus what `--allowed-host` adds. Never "anything": a wildcard bind still names its
 * machine.
 */
export function hostsFor(
  bind: string,
  port: number,
  extra: readonly string[],
  machine: { readonly hostname: string; readonly addresses: readonly string[] } = {
    hostname: hostname(),
    addresses: Object.values(networkInterfaces()).flatMap((list) =>
      (list ?? []).map((item) => item.address),
    ),
  },
): ReadonlySet<string> {
  const names = new Set(extra.map((host) => host.toLowerCase()));
  const add = (address: string) =>
    names.add(`${address.includes(':') ? `[${address}]` : address}:${port}`.toLowerCase());
  if (WILDCARDS.has(bind)) for (const address of machine.addresses) add(address);
  else add(bind);
  if (!isLoopback(bind)) {
    add(machine.hostname);
    if (!machine.hostname.includes('.')) add(`${machine.hostname}.local`);
  }
  if (isLoopback(bind) || WILDCARDS.has(bind)) {
    for (const name of ['127.0.0.1', 'localhost', '::1']) add(name);
  }
  return names;
}

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

const OVERLOADED = JSON.stringify({
  error: { code: 'OVERLOADED', message: 'too many connections; try again shortly' },
});

function rawAnswer(socket: Socket, status: string, body: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${PROTOCOL_HEADER}: ${FLEET_PROTOCOL_VERSION}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Unauthenticated connections cannot use up the authenticated budget (budget.ts). */
export function connectionBudget(limits: Limits): ConnectionBudget<Socket> {
  return new ConnectionBudget<Socket>({
    authenticated: limits.maxConnections,
    unauthenticated: limits.maxUnauthenticatedConnections,
    perAddress: limits.unauthenticatedPerAddress,
  });
}

/** What a request Node's HTTP parser rejected is answered, pure: by the parser's error code. */
export function clientErrorAnswer(errorCode: string | undefined): {
  readonly code: 'REQUEST_TIMEOUT' | 'REQUEST_TOO_LARGE' | 'BAD_REQUEST';
  readonly status: string;
  readonly message: string;
} {
  const timeout = errorCode === 'ERR_HTTP_REQUEST_TIMEOUT';
  const code = timeout
    ? 'REQUEST_TIMEOUT'
    : errorCode === 'HPE_HEADER_OVERFLOW'
      ? 'REQUEST_TOO_LARGE'
      : 'BAD_REQUEST';
  const status = timeout
    ? '408 Request Timeout'
    : code === 'REQUEST_TOO_LARGE'
      ? '413 Payload Too Large'
      : '400 Bad Request';
  const message = timeout ? 'the request took too long' : 'malformed HTTP request';
  return { code, status, message };
}

/** A connection the budget refuses is closed (TLS) or answered 503 `OVERLOADED` (plain HTTP). */
function admitConnection(budget: ConnectionBudget<Socket>, socket: Socket, tls: boolean): void {
  const admission = budget.open(socket, socket.remoteAddress ?? 'unknown');
  if (!admission.admitted) {
    if (tls) socket.destroy();
    else rawAnswer(socket, '503 Service Unavailable', OVERLOADED);
    return;
  }
  admission.evict?.destroy();
  socket.once('close', () => budget.close(socket));
}

function answerClientError(
  audit: Pick<AuditLog, 'countRefusal'>,
  error: NodeJS.ErrnoException,
  socket: Socket,
): void {
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && (!pending || !pending.headersSent)) {
    const { code, status, message } = clientErrorAnswer(error.code);
    rawAnswer(socket, status, JSON.stringify({ error: { code, message } }));
    // No operation id, no client: counted per address and interval (audit/refusals.ts).
    audit.countRefusal({
      client: null,
      remote: socket.remoteAddress ?? 'unknown',
      operation: 'unknown',
      outcome: 'failed',
      code,
      status: Number(status.slice(0, 3)),
    });
  }
  socket.destroy();
}

/**
 * The server, not yet listening: every request goes to `pipeline` with its connection marked busy
 * in `budget` until the answer closes; connections are admitted by the budget first.
 */
export function createNodeServer(
  limits: Limits,
  tls: TlsMaterial | undefined,
  budget: ConnectionBudget<Socket>,
  pipeline: RequestHandler,
  audit: Pick<AuditLog, 'countRefusal'>,
): Server {
  const serverOptions = {
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 2)),
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    budget.busy(req.socket, true);
    res.once('close', () => budget.busy(req.socket, false));
    void pipeline(req, res);
  };
  const server: Server = tls
    ? createHttpsServer(
        {
          ...serverOptions,
          // A TLS handshake is pre-authentication time too: bounded like the headers.
          handshakeTimeout: serverOptions.headersTimeout,
          cert: tls.cert,
          key: tls.key,
        },
        handler,
      )
    : createHttpServer(serverOptions, handler);

  // Over TLS the request's socket is the TLS socket: budgeted from the handshake's end.
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) =>
    admitConnection(budget, socket, tls !== undefined),
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(audit, error, socket),
  );
  return server;
}

export function listenOn(server: Server, port: number, bind: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, bind, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops accepting, lets idle connections go now and cuts the rest after two seconds. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 2000).unref();
  });
}
