/**
 * What a runtime lifecycle test expects of a runtime on its node (runtime-node.ts): the node's id,
 * an artifact's sha256 and the commit its build record names, and from those the identity a
 * runtime built from the artifact must report (`RuntimeExpectation`: domains none,
 * systemd-user). Pure, and apart from the node's start so the launchd node (launchd-node.ts) can
 * share the id, the hash and the commit.
 */
import { createHash } from 'node:crypto';
import {
  BUILD_RECORD_ENTRY,
  FLEET_PROTOCOL_VERSION,
  commitLabel,
  parseBuildRecord,
  type RuntimeExpectation,
} from '@fleet/core';
import { readTgz } from '@fleet/controller';

export const NODE_ID = 'node-01';

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** The commit label the build record inside an artifact names (`null`: it has none). */
export function carriedCommit(bytes: Buffer): string | null {
  const entry = readTgz(bytes).find((e) => e.path === BUILD_RECORD_ENTRY && e.type === 'file');
  return entry
    ? commitLabel(parseBuildRecord(entry.data.toString('utf8'), BUILD_RECORD_ENTRY))
    : null;
}

/** What a runtime built from `bytes` must report on this node (domains: none; systemd-user). */
export function expectationFor(
  bytes: Buffer,
  pkg: { name: string; version: string },
  overrides: Partial<RuntimeExpectation> = {},
): RuntimeExpectation {
  return {
    nodeId: NODE_ID,
    package: pkg.name,
    version: pkg.version,
    build: { sha256: sha256(bytes), commit: carriedCommit(bytes) },
    protocol: { min: FLEET_PROTOCOL_VERSION, max: FLEET_PROTOCOL_VERSION },
    catalog: { domains: [], probers: [], bootstrapAdapters: ['systemd-user'] },
    ...overrides,
  };
}
