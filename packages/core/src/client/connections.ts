/**
 * One keep-alive connection per host (contract §14, "means"): a client's requests to its controller
 * reuse one socket instead of paying a TCP (and TLS) handshake each. An `http.Agent` per client with
 * `keepAlive`, so sequential requests share one socket; requests in flight at once may open more,
 * and at most one idle socket is kept. Idle sockets are unref'd (Node's agent does that), so they
 * never keep the CLI alive; `close()` ends them at the end of the verb.
 *
 * For https the agent's `createConnection` is the pinned connect of `tls.ts`: every new socket has
 * its certificate checked against fleet.yaml's fingerprint before the agent sees it, so no request
 * byte goes over a socket whose peer did not match — a reused socket is one that matched.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { RequestTarget } from './errors.js';
import { connectPinned } from './tls.js';

export interface HostConnectionsOptions {
  readonly target: Pick<RequestTarget, 'host' | 'url'>;
  /** fleet.yaml's `tls.fingerprint`: set for https, and then every new socket is pinned. */
  readonly tlsFingerprint?: string | undefined;
  /** Bound on making one pinned connection (connect and handshake). */
  readonly connectTimeoutMs: number;
}

/** The keep-alive connections of one client (one host). */
export interface HostConnections {
  readonly agent: http.Agent;
  /** The pin every new socket is checked against (`undefined`: plain http, no TLS at all). */
  readonly tlsFingerprint: string | undefined;
  /** Destroys every socket, idle or in use, and any pinned connection still being made. */
  close(): void;
}

export function hostConnections(options: HostConnectionsOptions): HostConnections {
  const pending = new Set<(reason: Error) => void>();
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 1 });
  if (options.tlsFingerprint !== undefined) {
    const fingerprint = options.tlsFingerprint;
    // http.Agent accepts the callback form of createConnection: the socket is handed over only
    // once the peer's certificate matched the pin (or the error is the request's error).
    const pinned = (
      connectOptions: { host?: string | null; port?: number | null },
      done: (error: Error | null, socket?: Socket) => void,
    ): undefined => {
      const connect = connectPinned({
        target: { ...options.target, operation: 'connect' },
        hostname: connectOptions.host ?? 'localhost',
        port: connectOptions.port ?? 443,
        fingerprint,
        timeoutMs: options.connectTimeoutMs,
      });
      pending.add(connect.cancel);
      connect.socket.then(
        (socket) => {
          pending.delete(connect.cancel);
          done(null, socket);
        },
        (error: Error) => {
          pending.delete(connect.cancel);
          done(error);
        },
      );
      return undefined;
    };
    (agent as unknown as { createConnection: typeof pinned }).createConnection = pinned;
  }
  return {
    agent,
    tlsFingerprint: options.tlsFingerprint,
    close() {
      for (const cancel of pending) cancel(new Error('the client was closed'));
      pending.clear();
      agent.destroy();
    },
  };
}
