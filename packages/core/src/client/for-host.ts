/**
 * A client for one host of the fleet repository: its controller URL and pinned fingerprint from
 * fleet.yaml, its token from the operator's credentials file. Every verb that talks to a host
 * builds its client here, so the pin is never forgotten.
 */
import type { FleetRepo } from '../repo/load.js';
import { hostEntry } from '../repo/load.js';
import { tokenFor } from '../repo/credentials.js';
import type { Credentials } from '../repo/schema.js';
import { createControllerClient, type ControllerClient } from './client.js';

export interface ClientForHostOptions {
  readonly repo: FleetRepo;
  readonly host: string;
  readonly credentials: Credentials;
  /** The credentials file's path, for the error when the host has no token. */
  readonly credentialsPath: string;
  readonly timeoutMs?: number;
}

export function clientForHost(options: ClientForHostOptions): ControllerClient {
  const entry = hostEntry(options.repo, options.host);
  return createControllerClient({
    host: options.host,
    url: entry.controller,
    token: tokenFor(options.credentials, options.host, options.credentialsPath),
    tlsFingerprint: entry.tls?.fingerprint,
    timeoutMs: options.timeoutMs,
  });
}
