/**
 * `runtime-status` on the node (contract §12): the journal reconciled with what is observed — the
 * `current` pointer, the supervisor (through the adapter the last transaction used, else the one
 * the node is supervised by), and the live identity — by the pure `reconcileStatus`.
 */
import { readdir, readFile } from 'node:fs/promises';
import {
  runtimeLayout,
  readCurrentPointer,
  resolveGenerationName,
  type BootstrapAdapter,
  type IdentityResponse,
  type NodeContext,
  type ObservedSupervisor,
  type Registry,
  type RuntimeStatusResponse,
  type SupervisorKind,
} from '@fleet/core/node';
import { lastTransaction, RuntimeJournal } from '../generations/journal.js';
import { runtimeLockHolder } from '../generations/lock.js';
import { reconcileStatus } from '../generations/status.js';
import { describeRecord } from './journal-history.js';
import { processAlive } from '../process-alive.js';
import { runnerFiles } from './spawn.js';

export interface StatusInput {
  readonly ctx: NodeContext;
  readonly registry: Registry;
  /** The supervisor to observe when the journal names none (the host's recorded one). */
  readonly supervisor: SupervisorKind | null;
  /** The live runtime's identity; `null` when none answered. */
  readonly identity: IdentityResponse | null;
}

async function observeSupervisor(
  registry: Registry,
  ctx: NodeContext,
  supervisor: string | null,
): Promise<ObservedSupervisor | null> {
  if (supervisor === null) return null;
  let adapter: BootstrapAdapter;
  try {
    adapter = await registry.bootstrapAdapter(supervisor as SupervisorKind);
  } catch {
    return null;
  }
  return adapter.observe(ctx).catch(() => null);
}

/** Generations present (build ids — a Windows short name resolved from its manifest), sorted. */
async function generationsOn(ctx: NodeContext): Promise<string[]> {
  const layout = runtimeLayout(ctx.home, ctx.platform);
  const names = await readdir(layout.generations).catch(() => [] as string[]);
  const ids = await Promise.all(names.map((name) => resolveGenerationName(layout, name)));
  return ids.filter((id): id is string => id !== null).sort();
}

/** The pid of the open transaction's runner (`runner-<txn>.pid`) while it lives, else `null`. */
async function liveRunner(home: string, transaction: string): Promise<number | null> {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(transaction)) return null;
  const text = await readFile(runnerFiles(home, transaction).pid, 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return null;
  if (process.platform !== 'linux') return pid;
  // A pid reused by another process is no runner: its command line must be the runner's.
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
  return cmdline === null || cmdline.includes('runtime-run') ? pid : null;
}

export async function runtimeStatusOf(input: StatusInput): Promise<RuntimeStatusResponse> {
  const { ctx } = input;
  const journal = await new RuntimeJournal(ctx.home).read();
  const txn = journal.corrupt ? null : lastTransaction(journal);
  const supervisorKind = txn?.begin.data.supervisor ?? input.supervisor;
  const [pointer, supervisor, holder, runner, generations] = await Promise.all([
    readCurrentPointer(runtimeLayout(ctx.home, ctx.platform)),
    observeSupervisor(input.registry, ctx, supervisorKind),
    runtimeLockHolder(ctx.home),
    txn && !txn.ended ? liveRunner(ctx.home, txn.id) : Promise.resolve(null),
    generationsOn(ctx),
  ]);
  // The lock's holder, else the open transaction's runner still waiting for its go (issue 36:
  // the operator tells a dead runner from one that has not started by this).
  const busy = holder ?? runner;
  const status = reconcileStatus(journal, {
    pointer,
    supervisor,
    identity: input.identity,
    busy: busy !== null,
  });
  return {
    state: status.state,
    journal: status.journal,
    transaction:
      status.transaction && txn
        ? {
            ...status.transaction,
            planId: txn.begin.data.planId ?? null,
            steps: txn.records.map((record) => ({
              seq: record.seq,
              at: record.at,
              step: record.step,
              detail: describeRecord(record),
            })),
          }
        : null,
    observed: {
      ...status.observed,
      supervisorState: supervisor?.state ?? null,
    },
    next: status.next,
    problems: [...status.problems],
    code: status.code,
    generations,
    busy,
    observedAt: ctx.clock.now().toISOString(),
  };
}
