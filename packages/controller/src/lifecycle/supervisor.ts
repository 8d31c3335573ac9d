/**
 * Which supervisor runs this node's controller, for node-local callers that are not the
 * controller (the recovery receiver): the one the last journaled transaction used, else the first
 * adapter for this platform whose definition is present.
 */
import type {
  BootstrapAdapter,
  NodeContext,
  ObservedSupervisor,
  Registry,
  SupervisorKind,
} from '@fleet/core';
import { lastTransaction, RuntimeJournal } from '../generations/journal.js';

export interface NodeSupervisor {
  readonly adapter: BootstrapAdapter;
  readonly observed: ObservedSupervisor | null;
}

export async function nodeSupervisor(
  registry: Registry,
  ctx: NodeContext,
  preferred?: string,
): Promise<NodeSupervisor | null> {
  const journal = await new RuntimeJournal(ctx.home).read();
  const journaled = journal.corrupt ? undefined : lastTransaction(journal)?.begin.data.supervisor;
  const kinds = [
    ...new Set(
      [
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
    if (kind === preferred || kind === journaled || observed?.present) return { adapter, observed };
  }
  return null;
}
