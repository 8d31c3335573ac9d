/**
 * One keep-alive connection per host (contract §14, "means"): a client's requests to its controller
 * reuse one socket instead of paying a TCP (and TLS) handshake each. Sequential requests share one
 * socket; requests in flight at once may open more, and at most one idle socket is kept. An idle
 * socket is unref'd, so it never keeps the CLI alive, and dropped as soon as the controller closes
 * it; `close()` ends every socket at the end of the verb.
 *
 * For https every new socket is opened by the pinned connect of `tls.ts`: its certificate is checked
 * against fleet.yaml's fingerprint before it is handed out, so no request byte goes over a socket
 * whose peer did not match — a reused socket is one that matched.
 */
import net, { type Socket } from 'node:net';
import type { RequestTarget } from './errors.js';
import { unreachable } from './errors.js';
import { connectPinned } from './tls.js';

export interface HostConnectionsOptions {
  readonly target: Pick<RequestTarget, 'host' | 'url'>;
  /** fleet.yaml's `tls.fingerprint`: set for https, and then every new socket is pinned. */
  readonly tlsFingerprint?: string | undefined;
  /** Bound on making one pinned connection (connect and handshake). */
  readonly connectTimeoutMs: number;
}

/** A connection being made: the socket once it is usable, and how to give up on it. */
export interface Connecting {
  readonly socket: Promise<Socket>;
  readonly cancel: (reason: Error) => void;
}

/** The keep-alive connections of one client (one host). */
export interface HostConnections {
  /** The pin every new socket is checked against (`undefined`: plain http, no TLS at all). */
  readonly tlsFingerprint: string | undefined;
  /** The idle socket, taken for one request (`undefined` when none is kept). */
  takeIdle(): Socket | undefined;
  /** A new socket to `hostname:port`, pinned for https, closed with the others by `close()`. */
  open(target: RequestTarget, hostname: string, port: number): Connecting;
  /** Keeps `socket`, after a whole answer, for the next request (one idle socket at most). */
  keep(socket: Socket): void;
  /** Destroys every socket, idle or in use, and any connection still being made. */
  close(): void;
}

/**
 * A new connection: plain TCP, or TLS checked against `fingerprint` (`tls.ts`). Resolves once the
 * socket is connected (and, for TLS, the peer matched); rejects with `HOST_UNREACHABLE` or
 * `TLS_FINGERPRINT_MISMATCH`.
 */
export function openConnection(
  target: RequestTarget,
  hostname: string,
  port: number,
  fingerprint: string | undefined,
  timeoutMs?: number,
): Connecting {
  if (fingerprint !== undefined) {
    return connectPinned({
      target,
      hostname,
      port,
      fingerprint,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  }
  const socket = net.connect({ host: hostname, port, noDelay: true });
  let fail: (error: Error) => void = () => undefined;
  const connected = new Promise<Socket>((resolve, reject) => {
    fail = (error) => {
      socket.destroy();
      reject(error);
    };
    const onError = (error: Error) => fail(unreachable(target, error));
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.removeListener('error', onError);
      resolve(socket);
    });
  });
  return { socket: connected, cancel: (reason) => fail(reason) };
}

export function hostConnections(options: HostConnectionsOptions): HostConnections {
  const sockets = new Set<Socket>();
  const pending = new Set<(reason: Error) => void>();
  let idle: Socket | undefined;
  // While idle, the controller may close the socket (its keep-alive timeout): drop it then.
  const dropIdle = (): void => {
    const socket = idle;
    idle = undefined;
    socket?.destroy();
  };
  const unwatch = (socket: Socket): void => {
    socket.removeListener('close', dropIdle);
    socket.removeListener('end', dropIdle);
    socket.removeListener('error', dropIdle);
    socket.removeListener('data', dropIdle);
  };
  return {
    tlsFingerprint: options.tlsFingerprint,
    takeIdle() {
      const socket = idle;
      idle = undefined;
      if (socket === undefined) return undefined;
      unwatch(socket);
      if (socket.destroyed || socket.readyState !== 'open') {
        socket.destroy();
        return undefined;
      }
      socket.ref();
      return socket;
    },
    open(target, hostname, port) {
      const connecting = openConnection(
        target,
        hostname,
        port,
        options.tlsFingerprint,
        options.tlsFingerprint === undefined ? undefined : options.connectTimeoutMs,
      );
      pending.add(connecting.cancel);
      const socket = connecting.socket.then(
        (made) => {
          pending.delete(connecting.cancel);
          sockets.add(made);
          made.once('close', () => sockets.delete(made));
          return made;
        },
        (error: unknown) => {
          pending.delete(connecting.cancel);
          throw error;
        },
      );
      return { socket, cancel: connecting.cancel };
    },
    keep(socket) {
      if (idle !== undefined || socket.destroyed || !sockets.has(socket)) {
        socket.destroy();
        return;
      }
      idle = socket;
      socket.unref();
      socket.once('close', dropIdle);
      socket.once('end', dropIdle);
      socket.once('error', dropIdle);
      // Nothing may arrive on an idle socket: anything that does is no answer to a request.
      socket.once('data', dropIdle);
    },
    close() {
      for (const cancel of pending) cancel(new Error('the client was closed'));
      pending.clear();
      idle = undefined;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}
