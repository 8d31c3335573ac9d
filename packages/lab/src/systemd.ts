/**
 * `fleet lab up --supervisor systemd-user` (contract §13): each lab controller a real unit of the
 * calling user's running `systemd --user` manager instead of a lab supervisor, installed through
 * the bootstrap-systemd adapter — the same code that installs a real node's controller. The unit,
 * `fleet-lab-<tag>-<host>.service` (the tag tells labs of one user apart), lives in the node's
 * home and is linked into the manager's search path; the adapter records it in the node's
 * `supervisor.json`, so the node's coupled restarts (transport-identity) and `lab down` find it.
 *
 * Each controller runs this CLI's `controller serve` (the dev checkout, as under the lab
 * supervisor) on a fixed port chosen when the lab is made and kept when it is brought up again.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import * as core from '@fleet/core';
import type { BootstrapAdapter, NodeContext } from '@fleet/core';
import { createNodeContext } from '@fleet/controller';

/**
 * The systemd-user bootstrap adapter, as the registry provides it (`registry.bootstrapAdapter(
 * 'systemd-user')`): the lab reaches the plugin only through the registry.
 */
export type AdapterSource = () => Promise<BootstrapAdapter>;

export interface SystemdHost {
  readonly host: string;
  readonly home: string;
  readonly nodeId: string;
  /** A fixed port: recorded for a lab brought up again, else 0 (one is chosen). */
  readonly port: number;
}

export interface SystemdNode {
  readonly host: string;
  readonly nodeId: string;
  readonly port: number;
  readonly pid: number;
  readonly unit: string;
}

/** `fleet-lab-<8 hex of the lab's real DIR>-<host>.service`. */
export function labUnitName(labDir: string, host: string): string {
  const tag = createHash('sha256').update(labDir).digest('hex').slice(0, 8);
  return `fleet-lab-${tag}-${host}.service`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no free port'));
      });
    });
  });
}

function contextOf(host: SystemdHost | { home: string; host: string }): NodeContext {
  return createNodeContext({ home: host.home, nodeId: host.host });
}

/**
 * Installs and starts each host's unit; resolves once every controller runs and accepts
 * connections on its port. A failure stops and removes what this call installed.
 */
export async function startSystemdNodes(options: {
  readonly labDir: string;
  readonly fleetBin: string;
  readonly hosts: readonly SystemdHost[];
  readonly readyTimeoutMs: number;
  readonly progress: (line: string) => void;
  readonly adapter: AdapterSource;
}): Promise<SystemdNode[]> {
  const adapter = await options.adapter();
  const installed: SystemdHost[] = [];
  try {
    const first = options.hosts[0];
    if (first !== undefined) {
      const problems = await adapter.preflight(contextOf(first));
      if (problems.length > 0) {
        throw new core.FleetError(
          'PRECONDITION_FAILED',
          `the calling user's systemd --user manager cannot run the lab: ${problems.map((p) => `${p.code}: ${p.message}`).join('; ')}`,
        );
      }
    }
    const nodes: SystemdNode[] = [];
    for (const host of options.hosts) {
      const ctx = contextOf(host);
      const port = host.port > 0 ? host.port : await freePort();
      const unit = labUnitName(options.labDir, host.host);
      const command = [
        process.execPath,
        ...core.CONTROLLER_NODE_OPTIONS,
        options.fleetBin,
        'controller',
        'serve',
        '--home',
        host.home,
        '--node-id',
        host.nodeId,
        '--port',
        String(port),
      ];
      installed.push(host);
      // As under the lab supervisor, the controllers inherit the caller's failpoints (tests).
      const failpoint = process.env['FLEET_FAILPOINT'];
      await adapter.installDefinition(
        ctx,
        adapter.definition({
          home: host.home,
          nodeId: host.nodeId,
          command,
          name: unit,
          ...(failpoint ? { environment: { FLEET_FAILPOINT: failpoint } } : {}),
        }),
      );
      await adapter.start(ctx);
      nodes.push({ host: host.host, nodeId: host.nodeId, port, pid: 0, unit });
    }
    options.progress(`waiting for ${nodes.length} units to run and accept connections`);
    return await Promise.all(
      nodes.map(async (node, index) => {
        const ctx = contextOf(options.hosts[index] as SystemdHost);
        const observed = await core.waitForController(adapter, ctx, {
          timeoutMs: options.readyTimeoutMs,
        });
        return { ...node, pid: observed.pid ?? 0 };
      }),
    );
  } catch (error) {
    await removeSystemdNodes(installed, options.adapter).catch(() => undefined);
    throw error;
  }
}

/** Hosts whose recorded unit is loaded and active (a lab that still runs). */
export async function runningSystemdNodes(
  hosts: readonly { host: string; home: string }[],
  adapterOf: AdapterSource,
): Promise<{ host: string; unit: string; pid: number | null }[]> {
  let adapter: BootstrapAdapter | undefined;
  const running: { host: string; unit: string; pid: number | null }[] = [];
  for (const host of hosts) {
    const record = await core.readSupervisorRecord(host.home).catch(() => null);
    if (record?.supervisor !== 'systemd-user') continue;
    adapter ??= await adapterOf();
    const observed = await adapter.observe(contextOf(host)).catch(() => null);
    if (observed?.running)
      running.push({ host: host.host, unit: record.name, pid: observed.pid ?? null });
  }
  return running;
}

/** Stops and removes each host's recorded unit (the adapter's uninstall); what it removed. */
export async function removeSystemdNodes(
  hosts: readonly { host: string; home: string }[],
  adapterOf: AdapterSource,
): Promise<{ host: string; unit: string; pid: number | null }[]> {
  let adapter: BootstrapAdapter | undefined;
  const removed: { host: string; unit: string; pid: number | null }[] = [];
  const failures: string[] = [];
  for (const host of hosts) {
    const record = await core.readSupervisorRecord(host.home).catch(() => null);
    if (record?.supervisor !== 'systemd-user') continue;
    const ctx = contextOf(host);
    adapter ??= await adapterOf();
    const observed = await adapter.observe(ctx).catch(() => null);
    try {
      if (adapter.uninstall === undefined)
        throw new Error('the systemd-user adapter cannot uninstall');
      await adapter.uninstall(ctx);
      removed.push({ host: host.host, unit: record.name, pid: observed?.pid ?? null });
    } catch (error) {
      failures.push(`${host.host} (${record.name}): ${(error as Error).message}`);
    }
  }
  if (failures.length > 0) {
    throw new core.FleetError('ACTION_FAILED', `could not remove: ${failures.join('; ')}`);
  }
  return removed;
}
