/**
 * `fleet bootstrap plan|apply|status|rollback`'s service: derives a host's sealed runtime
 * bootstrap plan, and applies one exactly as planned, through the controller or the SSH recovery
 * receiver; reads a host's runtime state (the journal reconciled with what runs); rolls a host
 * back to its prior generation and follows the rollback to its end (runtime/bootstrap-plan.ts,
 * runtime/bootstrap-apply.ts, runtime/follow.ts; contract §12). Needs no plugin: nothing is
 * injected. The node side of the recovery path, `bootstrap receive`, is a service of its own
 * (bootstrap-receive.ts).
 */
import { writeFile } from 'node:fs/promises';
import {
  FleetError,
  sealPlan,
  type BootstrapPlan,
  type RuntimeStatusResponse,
  type TransactionVerdict,
} from '@fleet/core';
import { injectable } from '@fleet/core/di';
import { followTimeout } from '../runtime/apply.js';
import { dirtyWarning } from '../runtime/artifact.js';
import {
  applyBootstrapPlan,
  type BootstrapApplied,
  type BootstrapApplyInput,
} from '../runtime/bootstrap-apply.js';
import { derivePlan, observeRuntime } from '../runtime/bootstrap-plan.js';
import { followTransaction, unfinished } from '../runtime/follow.js';
import { loadHostRuntime } from '../runtime/host.js';
import { recordRuntimeVerb } from '../runtime/record.js';

export { renderBootstrapPlan, renderRuntimeStatus } from '../runtime/render.js';
export type { BootstrapApplied } from '../runtime/bootstrap-apply.js';

export interface BootstrapPlanOptions {
  readonly root: string;
  readonly host: string;
  /** The runtime tarball (default: fleet.yaml's artifact for canonicalVersion). */
  readonly artifact?: string;
  /** Where to write the sealed plan (never over an existing file; mode 0600). */
  readonly out?: string;
  /** Per request. */
  readonly timeoutMs: number;
  /** Warnings for stderr (an artifact built from a dirty tree). */
  readonly onNote?: (line: string) => void;
}

export interface BootstrapHostOptions {
  readonly root: string;
  readonly host: string;
  /** Per request. */
  readonly timeoutMs: number;
}

/** A host's runtime state, and whom it was read through. */
export interface BootstrapStatus {
  readonly host: string;
  readonly through: 'controller' | 'ssh';
  readonly status: RuntimeStatusResponse;
}

export interface BootstrapRollbackOptions extends BootstrapHostOptions {
  /** Really roll back; without it the current state is only read. */
  readonly confirm: boolean;
  /** How long the prior generation may take to pass acceptance. */
  readonly acceptanceTimeoutMs: number;
  /** The rollback's start on the node (stderr). */
  readonly onProgress?: (line: string) => void;
}

export type BootstrapRolledBack =
  | { readonly confirmed: false; readonly status: RuntimeStatusResponse }
  | {
      readonly confirmed: true;
      readonly transaction: string | null;
      readonly outcome: Extract<TransactionVerdict, { done: true }>['outcome'];
      readonly status: RuntimeStatusResponse | null;
    };

@injectable()
export class BootstrapService {
  /** The sealed plan (`bootstrap apply` reads it back strictly), written to `out` if given. */
  async plan(options: BootstrapPlanOptions): Promise<BootstrapPlan> {
    const host = await loadHostRuntime(options.root, options.host, {
      timeoutMs: options.timeoutMs,
    });
    const derived = await derivePlan(host, options.artifact);
    const dirty = dirtyWarning(derived.artifact);
    if (dirty !== null) options.onNote?.(dirty);
    const plan = sealPlan(derived.body);
    if (options.out !== undefined) await writePlan(options.out, plan);
    return plan;
  }

  /** Applies a plan file exactly as planned (`confirm`), or answers it unconfirmed. */
  apply(options: BootstrapApplyInput): Promise<BootstrapApplied> {
    return applyBootstrapPlan(options);
  }

  /**
   * The host's runtime state through its controller, else through the SSH recovery receiver;
   * neither answering is HOST_UNREACHABLE.
   */
  async status(options: BootstrapHostOptions): Promise<BootstrapStatus> {
    const host = await loadHostRuntime(options.root, options.host, {
      timeoutMs: options.timeoutMs,
    });
    const observation = await observeRuntime(host);
    if (observation.through === 'none')
      throw new FleetError('HOST_UNREACHABLE', observation.reason);
    return { host: options.host, through: observation.through, status: observation.status };
  }

  /**
   * Through the controller: the state before (all there is without `confirm`), then the rollback,
   * followed until it ends and recorded in the operator's log. A transaction that did not end, or
   * a rollback that failed, is thrown as its FleetError.
   */
  async rollback(options: BootstrapRollbackOptions): Promise<BootstrapRolledBack> {
    const host = await loadHostRuntime(options.root, options.host, {
      timeoutMs: options.timeoutMs,
    });
    const readStatus = () => host.client.runtimeStatus({ supervisor: host.entry.supervisor });
    const before = await readStatus();
    if (!options.confirm) return { confirmed: false, status: before };
    const { acceptanceTimeoutMs } = options;
    const started = await host.client.runtimeRollback({ acceptanceTimeoutMs });
    options.onProgress?.(`rolling back: runner ${started.runner} on the node (log ${started.log})`);
    const followed = await followTransaction(readStatus, {
      transaction: null,
      before: before.transaction
        ? { id: before.transaction.id, ended: before.transaction.lastStep === 'end' }
        : null,
      timeoutMs: followTimeout(acceptanceTimeoutMs),
      // A runner that died is said within seconds once it was seen working (issue 36).
      runner: {},
    });
    const transaction = followed.status?.transaction?.id ?? null;
    await recordRuntimeVerb('bootstrap rollback', options.host, transaction, followed.verdict);
    if (!followed.verdict.done) {
      throw unfinished(
        options.host,
        transaction,
        followed.status,
        started.log,
        followed.runnerDied,
        followed.answered,
      );
    }
    const { verdict } = followed;
    const txn = followed.status?.transaction;
    // A rollback transaction that was accepted, or an open one rolled back: both are success.
    const succeeded =
      verdict.outcome === 'rolled-back' ||
      (verdict.outcome === 'accepted' && txn?.kind === 'rollback') ||
      (verdict.outcome === 'failed' && txn?.steps.every((s) => s.step !== 'activated'));
    if (!succeeded && verdict.error) throw verdict.error;
    return { confirmed: true, transaction, outcome: verdict.outcome, status: followed.status };
  }
}

async function writePlan(out: string, plan: BootstrapPlan): Promise<void> {
  try {
    await writeFile(out, `${JSON.stringify(plan, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    throw new FleetError(
      'USAGE',
      `cannot write the plan to ${out}: ${String((error as NodeJS.ErrnoException).code ?? error)} (an existing plan is never overwritten)`,
    );
  }
}
