/**
 * Which supervisor runs this node's controller (contract §10.2, §12): the one the node recorded
 * when an adapter installed it (`~/.local/state/fleet/supervisor.json`) — never one a request
 * names. For node-local callers that are not the controller (the recovery receiver) a node with
 * no record falls back to what the last journaled transaction used, else the first adapter for
 * this platform whose definition is present.
 *
 * `recordedControllerSupervisor` is the seam a domain that restarts the controller gets
 * (`NodeContext.controllerSupervisor`): the recorded adapter behind core's `ControllerSupervisor`,
 * whose switch runs from a process of its own (`controller switch-node-id`, switch.ts) started out
 * of the restart's reach (launch.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  FleetError,
  NODE_POLICY_PATH,
  SUPERVISOR_RECORD_PATH,
  nodePolicyFile,
  readNodePolicyFile,
  adapterControllerSupervisor,
  readSupervisorRecord,
  resolveNodeSupervisor,
  type NodeSupervisor as NodePolicySupervisor,
  type ResolvedNodeSupervisor,
  type BootstrapAdapter,
  type ControllerSupervisor,
  type NodeContext,
  type ObservedSupervisor,
  type Registry,
  type SupervisorKind,
} from '@fleet/core/node';
import { lastTransaction, RuntimeJournal } from '../generations/journal.js';
import { launchNodeJob } from './launch.js';

export interface NodeSupervisor {
  readonly adapter: BootstrapAdapter;
  readonly observed: ObservedSupervisor | null;
}

export async function nodeSupervisor(
  registry: Registry,
  ctx: NodeContext,
  preferred?: string,
): Promise<NodeSupervisor | null> {
  const record = await readSupervisorRecord(ctx.home).catch(() => null);
  const journal = await new RuntimeJournal(ctx.home).read();
  const journaled = journal.corrupt ? undefined : lastTransaction(journal)?.begin.data.supervisor;
  const kinds = [
    ...new Set(
      [
        record?.supervisor,
        preferred,
        journaled,
        ...registry
          .bootstrapAdapters()
          .filter((entry) => entry.descriptor.platforms.includes(ctx.platform))
          .map((entry) => entry.descriptor.supervisor),
      ].filter((kind): kind is string => kind !== undefined),
    ),
  ];
  for (const kind of kinds) {
    let adapter: BootstrapAdapter;
    try {
      adapter = await registry.bootstrapAdapter(kind as SupervisorKind);
    } catch {
      continue;
    }
    const observed = await adapter.observe(ctx).catch(() => null);
    if (
      kind === record?.supervisor ||
      kind === preferred ||
      kind === journaled ||
      observed?.present
    )
      return { adapter, observed };
  }
  return null;
}

/**
 * The node's recorded supervisor checked against its policy's `supervisor` (core
 * `resolveNodeSupervisor`): `SUPERVISOR_MISMATCH` when they disagree. The controller calls it at
 * start (it does not start on a disagreement) and before every coupled restart.
 */
export async function drivenSupervisor(
  home: string,
  policy: NodePolicySupervisor | undefined,
): Promise<ResolvedNodeSupervisor> {
  return resolveNodeSupervisor(policy, await readSupervisorRecord(home), {
    policyFile: NODE_POLICY_PATH,
    recordFile: SUPERVISOR_RECORD_PATH,
  });
}

/** The node policy's `supervisor`, read afresh (`undefined`: none named, or no readable policy). */
export async function policySupervisorOf(home: string): Promise<NodePolicySupervisor | undefined> {
  try {
    return (await readNodePolicyFile(nodePolicyFile(home), home)).policy.supervisor;
  } catch {
    // An unusable policy is refused where it matters (the controller's start, bootstrap policy).
    return undefined;
  }
}

/**
 * Refuses a transaction that would install `supervisor` on a node whose policy names another
 * (`SUPERVISOR_MISMATCH`, nothing staged): the node's owner decides what runs it.
 */
export async function requireSupervisorOfPolicy(home: string, supervisor: string): Promise<void> {
  const policy = await policySupervisorOf(home);
  if (policy === undefined || policy.kind === supervisor) return;
  throw new FleetError(
    'SUPERVISOR_MISMATCH',
    `${NODE_POLICY_PATH} says ${policy.kind} runs this controller, but the request installs it under ${supervisor}; nothing was staged`,
  );
}

/** The policy's name for the controller under `kind` (its unit or task), if it names one. */
export function policySupervisorName(
  policy: NodePolicySupervisor | undefined,
  kind: string,
): string | undefined {
  if (policy?.kind !== kind) return undefined;
  if (policy.kind === 'systemd-user') return policy.unit;
  if (policy.kind === 'windows-task') return policy.task.replace(/^\\/, '');
  if (policy.kind === 'launchd') return policy.label;
  return undefined;
}

/** Where the switch's process logs, one line per step (kept as evidence). */
export const SWITCH_LOG = '.local/state/fleet/logs/transport-identity.log';

/** How long the switch waits for a restarted controller (the lab restarts cold, up to 3 times). */
export const SWITCH_RESTART_TIMEOUT_MS = 200_000;

/**
 * The supervisor the node recorded, as core's `ControllerSupervisor` for a domain's coupled
 * restart; `null` when the node records none fleet can drive.
 */
export async function recordedControllerSupervisor(
  registry: Registry,
  ctx: NodeContext,
  policy: NodePolicySupervisor | undefined,
): Promise<ControllerSupervisor | null> {
  const resolved = await drivenSupervisor(ctx.home, policy);
  if (!resolved.drives) return null;
  const { record } = resolved;
  const adapter = await registry.bootstrapAdapter(record.supervisor);
  return {
    ...adapterControllerSupervisor(adapter, ctx, {
      replacesCaller: true,
      timeoutMs: SWITCH_RESTART_TIMEOUT_MS,
    }),
    async switchFromOutside(plan): Promise<void> {
      const log = join(ctx.home, ...SWITCH_LOG.split('/'));
      await mkdir(dirname(log), { recursive: true, mode: 0o700 });
      await launchNodeJob(adapter, ctx, {
        name: `fleet-node-id-${plan.operationId}-${randomBytes(3).toString('hex')}`,
        slot: 'node-id-switch',
        args: [
          'controller',
          'switch-node-id',
          '--home',
          ctx.home,
          '--from',
          plan.from,
          '--to',
          plan.to,
          '--operation',
          plan.operationId,
          '--log-file',
          log,
        ],
        log,
      });
    },
  };
}
