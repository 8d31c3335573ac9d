/** `GET /v1/summary` (core wire/summary.ts): `fleet status`'s one read per host. */
import type { NodeSummaryResponse } from '@fleet/core/node';
import { FLEET_PROTOCOL_VERSION } from '@fleet/core/node';
import { RuntimeJournal } from '../generations/journal.js';
import { runtimeLockHolder } from '../generations/lock.js';
import { summarizeRuntime } from '../lifecycle/summary.js';
import { healthOf } from './identity.js';
import type { Handler } from './types.js';

export const summary: Handler = async ({ runtime }) => {
  const [health, journal, holder] = await Promise.all([
    healthOf(runtime),
    // An unreadable journal is one that cannot be trusted: recovery, as a corrupt one.
    new RuntimeJournal(runtime.home).read().catch(() => ({
      records: [],
      torn: null,
      corrupt: { line: 0, reason: 'unreadable' },
      validBytes: 0,
    })),
    runtimeLockHolder(runtime.home),
  ]);
  const body: NodeSummaryResponse = {
    nodeId: runtime.nodeId,
    package: runtime.package.name,
    version: runtime.package.version,
    build: { sha256: runtime.build.sha256, commit: runtime.build.commit },
    protocol: FLEET_PROTOCOL_VERSION,
    startedAt: runtime.startedAt,
    health: health.status,
    runtime: summarizeRuntime(journal, holder !== null),
  };
  return { status: 200, body };
};
