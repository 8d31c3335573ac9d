/**
 * `fleet version`'s transport (contract §11): the versions request a host is asked (its tools, and
 * its supervisor's probers), and the one a controller client answers — `POST /v1/versions`, with
 * the fallback to `POST /v1/probe` for a node that predates `probes` (protocol 2, additive). The
 * engine (version.ts) takes the transport as a parameter (`ReadVersions`), so it is tested without
 * a network and the CLI passes the controller client.
 */
import type { ControllerClient } from '../client/client.js';
import { asFleetError } from '../client/for-each-host.js';
import { isFleetError } from '../errors.js';
import type { SnapshotProbeResult } from '../wire/snapshot.js';
import type { VersionsRequest, VersionsResponse } from '../wire/versions.js';
import type { ProberRuntime } from './drift-inputs.js';
import type { VersionDesired } from './version-desired.js';
import { supervisorProbersFor } from './version-supervisor.js';

/** The transport: one versions request to one host (the CLI passes the controller client). */
export type ReadVersions = (host: string, request: VersionsRequest) => Promise<VersionsResponse>;

/** The versions request for a host: its tools, and its supervisor's probers when there are any. */
export function versionsRequestFor(
  desired: VersionDesired,
  probers: readonly ProberRuntime[],
): VersionsRequest {
  const asked = supervisorProbersFor(probers, desired);
  return {
    tools: [...new Set(desired.tools)],
    ...(asked.length === 0 ? {} : { probes: asked.map((p) => ({ prober: p.id, parameters: {} })) }),
  };
}

/** Whether a node refused the request only because it predates `probes` (protocol 2, additive). */
export function refusedProbesKey(error: unknown): boolean {
  return (
    isFleetError(error) &&
    error.code === 'BAD_REQUEST' &&
    /\bprobes\b/.test(error.message) &&
    /unrecognized key/i.test(error.message)
  );
}

/**
 * The versions transport of one controller client: one `POST /v1/versions` carrying the probes.
 * A node that predates `probes` refuses the key; it is asked again without them and each prober
 * through `POST /v1/probe` (open to `versions:read` for a supervisor's prober since protocol 2) —
 * two requests for an old node, one for a current one.
 */
export function readVersionsThrough(
  client: Pick<ControllerClient, 'versions' | 'probe'>,
): (request: VersionsRequest) => Promise<VersionsResponse> {
  return async (request) => {
    try {
      return await client.versions(request);
    } catch (error) {
      if (request.probes === undefined || !refusedProbesKey(error)) throw error;
    }
    const { probes, ...withoutProbes } = request;
    const answer = await client.versions(withoutProbes);
    const answered: SnapshotProbeResult[] = [];
    for (const probe of probes) {
      try {
        const got = await client.probe(probe);
        answered.push({ ...got, state: 'ok' });
      } catch (error) {
        const failure = asFleetError(error);
        answered.push({
          prober: probe.prober,
          state: 'error',
          code: failure.code,
          message: failure.message,
        });
      }
    }
    return { ...answer, probes: answered };
  };
}
