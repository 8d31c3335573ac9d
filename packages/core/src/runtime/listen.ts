/**
 * Where a host's controller must listen so the operator reaches it (contract §5, §12; issue 35
 * item 2): read from fleet.yaml's `hosts.<host>.controller` URL, the one address every verb
 * connects to. A bootstrap installs the controller with these flags (`--bind`, `--port`,
 * `--tls-cert`/`--tls-key`, `--allowed-host`), so a first bootstrap answers where fleet.yaml says
 * instead of on the `controller serve` defaults (127.0.0.1:7701, plain HTTP).
 *
 * Pure: no name resolution, no look at the machine's interfaces.
 */
import { isIP } from 'node:net';
import { FleetError } from '../errors.js';
import type { ControllerListen, PlannedListen } from '../schemas/controller-listen.js';

// The shapes moved to schemas/ (the wire reads them too); their tests and users still find them here.
export {
  controllerListenSchema,
  plannedListenSchema,
  type ControllerListen,
  type PlannedListen,
} from '../schemas/controller-listen.js';

/**
 * The listen of the controller fleet.yaml's `controller` URL names:
 *
 * - an IP literal → bind that address (a loopback one as it is: `127.0.0.2` binds `127.0.0.2`);
 * - `localhost` → `127.0.0.1` (the controller's Host check accepts `localhost:PORT` on loopback);
 * - a DNS name → `0.0.0.0` and `allowedHosts: ['name:port']`, so a request whose `Host` names it
 *   passes the controller's DNS-rebinding check (contract §5 "the Host check stays on");
 * - the port: the URL's, else the scheme's default (80, 443) — the port the operator's client
 *   connects to (`packages/core/src/client/transport.ts`), so the controller listens where fleet
 *   connects. fleet.yaml examples name the port (`:7701`, the `controller serve` default);
 * - `tls`: the scheme is https.
 *
 * A URL that is not an http(s) origin is `USAGE` (fleet.yaml's schema refuses it first).
 */
export function controllerListen(controllerUrl: string): ControllerListen {
  let url: URL;
  try {
    url = new URL(controllerUrl);
  } catch {
    throw new FleetError('USAGE', `controller URL ${JSON.stringify(controllerUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FleetError(
      'USAGE',
      `controller URL ${JSON.stringify(controllerUrl)} must be http:// or https://`,
    );
  }
  const tls = url.protocol === 'https:';
  // WHATWG URL drops a port equal to the scheme's default: '' means 80 or 443.
  const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost') return { bind: '127.0.0.1', port, tls, allowedHosts: [] };
  // An IP literal, loopback (127.0.0.2, ::1) or not: that address, nothing else.
  if (isIP(host) !== 0) return { bind: host, port, tls, allowedHosts: [] };
  return { bind: '0.0.0.0', port, tls, allowedHosts: [`${host}:${port}`] };
}

/** One line for humans: `0.0.0.0:7701 https (Host: node.lan:7701)`. */
export function describeListen(listen: ControllerListen): string {
  const address = listen.bind.includes(':') ? `[${listen.bind}]` : listen.bind;
  const hosts = listen.allowedHosts.length > 0 ? ` (Host: ${listen.allowedHosts.join(', ')})` : '';
  return `${address}:${listen.port} ${listen.tls ? 'https' : 'http'}${hosts}`;
}

/** A plan's `listen` for a host of fleet.yaml: its controller URL's listen and its pin. */
export function plannedListen(host: {
  readonly controller: string;
  readonly tls?: { readonly fingerprint: string } | undefined;
}): PlannedListen {
  const listen = controllerListen(host.controller);
  return {
    ...listen,
    allowedHosts: [...listen.allowedHosts],
    fingerprint: host.tls?.fingerprint ?? null,
  };
}

/**
 * The refusal when the certificate a node made for its new controller (the stage's answer, or
 * the recovery receiver's) is not the one fleet.yaml pins: every later verb would refuse that
 * controller (`TLS_FINGERPRINT_MISMATCH`, exit 4), so nothing is activated. `null` when it
 * matches, when nothing is pinned, or when the node made none (no TLS).
 */
export function pinnedCertificateRefusal(input: {
  readonly host: string;
  readonly pinned: string | null;
  readonly actual: string | undefined;
}): FleetError | null {
  if (input.pinned === null || input.actual === undefined) return null;
  const norm = (value: string) =>
    value
      .replace(/^sha256:/i, '')
      .replace(/:/g, '')
      .toUpperCase();
  if (norm(input.pinned) === norm(input.actual)) return null;
  return new FleetError(
    'TLS_FINGERPRINT_MISMATCH',
    `${input.host}'s new controller certificate is ${input.actual}, but fleet.yaml pins ${input.pinned}; nothing was activated — pin hosts.${input.host}.tls.fingerprint: '${input.actual}' (a reviewed commit) and apply again`,
  );
}
