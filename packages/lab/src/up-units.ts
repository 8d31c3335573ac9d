/**
 * `fleet lab up --supervisor systemd-user` (up.ts, systemd.ts): each controller installed through
 * the bootstrap-systemd adapter and started; the repository written with their ports; lab.json
 * once each answered its identity. A failure removes every unit this run installed.
 */
import type { LabDocument } from '@fleet/core';
import { removeSystemdNodes, startSystemdNodes } from './systemd.js';
import { finishLabUp, type LabStartedNode } from './up-finish.js';
import type { LabKeys } from './up-nodes.js';
import type { LabUpPlan } from './up-plan.js';
import type { LabUpOptions } from './up-options.js';

export async function labUpUnits(
  options: LabUpOptions,
  plan: LabUpPlan,
  keys: LabKeys,
): Promise<LabDocument> {
  const { hosts, previous } = plan;
  const progress = options.progress ?? (() => undefined);
  // The linked plugins' domains, which units do not serve: left out of the repository.
  const unserved = new Set((options.devPlugins ?? []).flatMap((plugin) => plugin.domains));
  if (unserved.size > 0) {
    progress(
      `not serving the linked plugins' domains ${[...unserved].join(', ')}: a systemd-user lab runs real units, which load only what their runtime carries`,
    );
  }
  const readyTimeout = options.readyTimeoutMs ?? 60_000;
  const deadline = Date.now() + readyTimeout;
  const recordedPort = (host: string): number => {
    const url = previous?.hosts.find((entry) => entry.name === host)?.controller;
    return url === undefined ? 0 : Number(new URL(url).port);
  };
  const homeOf = (host: string) => plan.homes.get(host) as string;
  const systemdAdapter = () => options.registry.bootstrapAdapter('systemd-user');
  progress(
    `starting ${hosts.length} controller${hosts.length === 1 ? '' : 's'}, each a unit of the user's systemd --user manager`,
  );
  const started = await startSystemdNodes({
    labDir: plan.lab.dir,
    fleetBin: options.fleetBin,
    hosts: hosts.map((host) => ({
      host,
      home: homeOf(host),
      nodeId: host,
      port: recordedPort(host),
    })),
    readyTimeoutMs: readyTimeout,
    progress,
    adapter: systemdAdapter,
  });
  const nodes = new Map<string, LabStartedNode>(
    started.map((node) => [
      node.host,
      { controller: `http://127.0.0.1:${node.port}`, nodeId: node.nodeId, pid: node.pid },
    ]),
  );
  try {
    const domains = options.registry
      .domains()
      .map((entry) => entry.descriptor)
      .filter((descriptor) => !unserved.has(descriptor.domain));
    return await finishLabUp({
      plan,
      keys,
      nodes,
      repo: { domains, supervisor: 'systemd-user' },
      deadline,
      progress,
    });
  } catch (error) {
    progress('lab up failed: removing the units it installed');
    await removeSystemdNodes(
      hosts.map((host) => ({ host, home: homeOf(host) })),
      systemdAdapter,
    ).catch(() => undefined);
    throw error;
  }
}
