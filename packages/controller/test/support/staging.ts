/**
 * Stage requests against a real controller (contract §12) whose registry has a bootstrap adapter
 * that only preflights: staging touches nothing else of it, and any other call fails the test.
 */
import { createHash } from 'node:crypto';
import { defineRegistration, type BootstrapAdapter, type RuntimeExpectation } from '@fleet/core';
import { registryFromHooks } from '@fleet/testkit';
import { makeTgz, runtimePackage } from './tar.js';
import { newId, type PolicyInput } from './node.js';

/**
 * The policy of a hand-made node that stages runtimes: runtime changes allowed through
 * systemd-user, and — explicitly, a test node's leave, never a default (ADR 0019) — artifacts
 * without a release signature.
 */
export const stagingPolicy = (): PolicyInput => ({
  bootstrap: { allow: true, supervisors: ['systemd-user'] },
  runtime: { allowUnsigned: true },
});

/** Staging touches only `preflight`; any other call would be a test bug, and says so. */
const notForStaging = (what: string) => () => {
  throw new Error(`staging called the adapter's ${what}`);
};
const stagingOnlyAdapter: BootstrapAdapter = {
  supervisor: 'systemd-user',
  platforms: ['linux', 'darwin', 'win32'],
  pointer: 'symlink',
  preflight: () => Promise.resolve([]),
  definition: notForStaging('definition'),
  readDefinition: notForStaging('readDefinition'),
  installDefinition: notForStaging('installDefinition'),
  start: notForStaging('start'),
  stop: notForStaging('stop'),
  restart: notForStaging('restart'),
  observe: notForStaging('observe'),
  recordNodeId: notForStaging('recordNodeId'),
};

export const stagingRegistry = () =>
  registryFromHooks([
    {
      plugin: { name: '@fleet/plugin-staging-fixture', version: '1.0.0', type: 'core' },
      hook: () =>
        defineRegistration({
          bootstrapAdapters: [
            {
              supervisor: 'systemd-user',
              platforms: ['linux', 'darwin', 'win32'],
              description: 'staging only',
              load: () => Promise.resolve(stagingOnlyAdapter),
            },
          ],
        }),
    },
  ]);

/** A stage request for a small runtime artifact of `version` (the same bytes for one version). */
export function stageBody(version: string) {
  const data = makeTgz(runtimePackage('@fleet/cli', version));
  const sha256 = createHash('sha256').update(data).digest('hex');
  const target: RuntimeExpectation = {
    nodeId: 'node-01',
    package: '@fleet/cli',
    version,
    build: { sha256, commit: null },
    protocol: { min: 1, max: 1 },
    catalog: { domains: [], probers: [], bootstrapAdapters: ['systemd-user'] },
  };
  return {
    operationId: newId(),
    kind: 'upgrade' as const,
    supervisor: 'systemd-user',
    planId: null,
    target,
    artifact: { sha256, bytes: data.length, content: data.toString('base64') },
  };
}
