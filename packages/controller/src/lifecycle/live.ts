/**
 * Asking the live runtime of this node who it is, from a node-local process (the runner, the
 * recovery receiver): the endpoint comes from the supervised command (`--port`, `--bind`,
 * `--tls-cert`), the token is a short-lived one issued into the node's own store (scope
 * `versions:read`, client `fleet-runtime-acceptance`) and revoked when done.
 */
import { readFile } from 'node:fs/promises';
import {
  ACCEPTANCE_TIMEOUT_MS,
  argvFlag,
  certificateFingerprint,
  controllerEndpoint,
  createControllerClient,
  type ControllerClient,
  type IdentityResponse,
} from '@fleet/core/node';
import { systemClock } from '../context.js';
import { statePaths } from '../state-paths.js';
import { TokenStore } from '../tokens/store.js';

export class LocalIdentityProbe {
  private token: { id: string; token: string } | null = null;

  constructor(private readonly home: string) {}

  private async bearer(): Promise<string> {
    if (this.token) return this.token.token;
    const store = new TokenStore(statePaths(this.home), systemClock);
    const issued = await store.issue({
      client: 'fleet-runtime-acceptance',
      scopes: ['versions:read'],
      ttlMs: ACCEPTANCE_TIMEOUT_MS.max * 3,
    });
    this.token = { id: issued.record.id, token: issued.token };
    return issued.token;
  }

  /** A client for the controller that `command` starts. */
  async client(command: readonly string[], name: string): Promise<ControllerClient> {
    const endpoint = controllerEndpoint(command);
    const cert = argvFlag(command, '--tls-cert');
    const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    return createControllerClient({
      host: name,
      url: `${cert ? 'https' : 'http'}://${host}:${endpoint.port}`,
      token: await this.bearer(),
      tlsFingerprint: cert ? certificateFingerprint(await readFile(cert)) : undefined,
      timeoutMs: 5_000,
    });
  }

  /** The identity the controller of `command` answers now, or `null`. */
  async identity(
    command: readonly string[] | undefined,
    name: string,
  ): Promise<IdentityResponse | null> {
    if (!command || command.length === 0) return null;
    try {
      return await (await this.client(command, name)).identity();
    } catch {
      return null;
    }
  }

  /** Revokes the short-lived token (idempotent). */
  async release(): Promise<void> {
    if (!this.token) return;
    const store = new TokenStore(statePaths(this.home), systemClock);
    await store.revoke(this.token.id).catch(() => undefined);
    this.token = null;
  }
}
