/** `GET /v1/summary` (core wire/summary.ts): `fleet status`'s one read per host. */
import type { NodeSummaryResponse } from '@fleet/core/node';
import { FLEET_PROTOCOL_VERSION } from '@fleet/core/node';
import { readRuntimeSummary } from '../lifecycle/summary.js';
import { healthOf } from './identity.js';
import type { Handler } from './types.js';

export const summary: Handler = async ({ runtime }) => {
  const [health, journal] = await Promise.all([
    healthOf(runtime),
    readRuntimeSummary(runtime.home),
  ]);
  const body: NodeSummaryResponse = {
    nodeId: runtime.nodeId,
    package: runtime.package.name,
    version: runtime.package.version,
    build: { sha256: runtime.build.sha256, commit: runtime.build.commit },
    protocol: FLEET_PROTOCOL_VERSION,
    startedAt: runtime.startedAt,
    health: health.status,
    runtime: journal,
  };
  return { status: 200, body };
};
