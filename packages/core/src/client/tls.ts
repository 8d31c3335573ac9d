/**
 * TLS with a pinned certificate (contract §3 `tls.fingerprint`, issue 3 item 6). Controllers on real
 * fleets serve self-signed certificates; trust comes from the sha256 fingerprint in fleet.yaml,
 * not from a CA, so the pin replaces both the chain and the name check.
 *
 * Node calls `checkServerIdentity` only after the chain verified, which a self-signed certificate
 * never does: a pin checked only there would never run. So the socket is opened here, before the
 * HTTP request exists, and the pin is checked when the handshake completes (`secureConnect`), in
 * `checkServerIdentity` too (for a CA-issued certificate, where Node does call it, the connection
 * is then refused inside the handshake). Only a socket whose peer matched is handed to the HTTP
 * request, so on a mismatch not one request byte — not the token, not the path — is written.
 */
import { isIP } from 'node:net';
import tls, { type PeerCertificate, type TLSSocket } from 'node:tls';
import { ControllerError, unreachable, type RequestTarget } from './errors.js';
import { normaliseFingerprint } from './fingerprint.js';

function mismatch(
  target: RequestTarget,
  expected: string,
  actual: string | undefined,
): ControllerError {
  const shown = actual ? `sha256:${actual}` : 'none';
  return new ControllerError(
    'TLS_FINGERPRINT_MISMATCH',
    target.host,
    `host ${target.host} (${target.url}) presented a certificate with fingerprint ${shown}, not the pinned ${expected}: refused before sending anything`,
    {
      suggestions: [
        'if the controller certificate was replaced on purpose, update tls.fingerprint in fleet.yaml (a reviewed commit)',
      ],
    },
  );
}

function peerMatches(cert: PeerCertificate | undefined, pin: string): boolean {
  const actual = cert?.fingerprint256;
  return typeof actual === 'string' && normaliseFingerprint(actual) === pin;
}

export interface PinnedConnectOptions {
  readonly target: RequestTarget;
  readonly hostname: string;
  readonly port: number;
  /** fleet.yaml's `tls.fingerprint`. */
  readonly fingerprint: string;
  /** Bound on connect and handshake (none: the caller's deadline cancels it). */
  readonly timeoutMs?: number;
}

/**
 * Opens a TLS connection and resolves with it only once the peer's certificate matched the pin.
 * Rejects with `TLS_FINGERPRINT_MISMATCH` (exit 4) or `HOST_UNREACHABLE` (exit 5). The returned
 * `cancel` destroys a connection still being made (the caller's timeout).
 */
export function connectPinned(options: PinnedConnectOptions): {
  socket: Promise<TLSSocket>;
  cancel: (reason: Error) => void;
} {
  const pin = normaliseFingerprint(options.fingerprint);
  let sock: TLSSocket | undefined;
  let settled = false;
  let finish: (error: Error | null) => void = () => undefined;
  const socket = new Promise<TLSSocket>((resolve, reject) => {
    finish = (error: Error | null): void => {
      if (settled) return;
      settled = true;
      if (error) {
        sock?.destroy();
        reject(error);
      } else resolve(sock as TLSSocket);
    };
    sock = tls.connect({
      host: options.hostname,
      port: options.port,
      // SNI must not be an IP address (RFC 6066); the pin, not the name, is what is checked.
      ...(isIP(options.hostname) === 0 ? { servername: options.hostname } : {}),
      ALPNProtocols: ['http/1.1'],
      // The chain of a self-signed certificate never verifies; the pin below is the trust anchor.
      rejectUnauthorized: false,
      checkServerIdentity: (_name, cert) =>
        peerMatches(cert, pin)
          ? undefined
          : mismatch(options.target, options.fingerprint, cert.fingerprint256),
    });
    sock.once('secureConnect', () => {
      const cert = sock?.getPeerCertificate();
      if (!peerMatches(cert, pin)) {
        finish(mismatch(options.target, options.fingerprint, cert?.fingerprint256));
        return;
      }
      sock?.removeAllListeners('error');
      if (options.timeoutMs !== undefined) sock?.setTimeout(0);
      finish(null);
    });
    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs;
      sock.setTimeout(ms, () =>
        finish(unreachable(options.target, new Error(`no TLS connection within ${ms} ms`))),
      );
    }
    sock.once('error', (error: Error) => {
      finish(error instanceof ControllerError ? error : unreachable(options.target, error));
    });
    sock.once('close', () =>
      finish(unreachable(options.target, new Error('connection closed during the TLS handshake'))),
    );
  });
  return {
    socket,
    cancel: (reason) => finish(reason),
  };
}
