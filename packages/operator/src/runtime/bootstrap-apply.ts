/**
 * `fleet bootstrap apply` as one service (contract §12, docs/runtime-lifecycle.md): read a plan
 * file, derive the plan again from the host as it is now (it must be unchanged: PLAN_MISMATCH), and
 * — only when confirmed — apply it through the node's controller, or over the SSH recovery
 * receiver when the plan's route is ssh and the operator asked for recovery. The transaction is
 * followed to its verdict and recorded in the operator's log; an unfinished or failed one is
 * thrown as the FleetError that says how to go on. The options name what to do, never a flag.
 */
import { readFile } from 'node:fs/promises';
import * as core from '@fleet/core';
import type {
  BootstrapPlan,
  ControllerListen,
  PlannedListen,
  RuntimeStatusResponse,
  TransactionVerdict,
} from '@fleet/core';
import { applyThroughController } from './apply.js';
import { derivePlan, type DerivedPlan } from './bootstrap-plan.js';
import { unfinished } from './follow.js';
import { loadHostRuntime, type HostRuntime } from './host.js';
import { followableOnInterrupt } from './interrupt.js';
import { recordRuntimeVerb } from './record.js';
import { applyOverSsh } from './recover.js';

export interface BootstrapApplyOptions {
  readonly root: string;
  /** The plan file `fleet bootstrap plan --out` wrote. */
  readonly planFile: string;
  /** False: check the plan is still current and apply nothing. */
  readonly confirm: boolean;
  /** The controller does not answer: the plan may go over the SSH recovery receiver. */
  readonly recover: boolean;
  readonly acceptanceTimeoutMs: number;
  /** Per-request timeout. */
  readonly timeoutMs: number;
  /** Each step of the transaction as it happens (stderr). */
  readonly onProgress?: (line: string) => void;
}

export type BootstrapApplyResult =
  | { readonly plan: BootstrapPlan; readonly confirmed: false }
  | {
      readonly plan: BootstrapPlan;
      readonly confirmed: true;
      readonly transaction: string;
      readonly outcome: Extract<TransactionVerdict, { done: true }>['outcome'];
      readonly status: RuntimeStatusResponse | null;
    };

/** A plan's listen as the stage sends it, and the pin the node's certificate must match. */
function listenAndPin(planned: PlannedListen): {
  listen: ControllerListen;
  pinned: string | null;
} {
  const { fingerprint, ...listen } = planned;
  return { listen, pinned: fingerprint };
}

/** Applies a bootstrap plan that is still current; throws PLAN_MISMATCH when it is not. */
export async function bootstrapApply(
  options: BootstrapApplyOptions,
): Promise<BootstrapApplyResult> {
  const plan = core.readPlan(
    core.parseStrictJson(await readFile(options.planFile, 'utf8'), options.planFile, 'USAGE'),
    options.planFile,
  );
  const host = await loadHostRuntime(options.root, plan.host, { timeoutMs: options.timeoutMs });
  const derived = await derivePlan(host, plan.artifact.file);
  const again = core.sealPlan(derived.body);
  if (again.id !== plan.id) {
    const { id: _old, ...before } = plan;
    const { id: _new, ...after } = again;
    throw new core.FleetError(
      'PLAN_MISMATCH',
      `the plan changed since ${options.planFile} was written (${core.planDifferences(before, after).join(', ')}); nothing was applied`,
      { suggestions: [`review a new plan: fleet bootstrap plan ${plan.host} --out NEW.plan.json`] },
    );
  }
  if (!options.confirm) return { plan, confirmed: false };
  const ran = await applyPlan(options, plan, host, derived);
  const { transaction, verdict, status } = ran;
  await recordRuntimeVerb('bootstrap apply', plan.host, transaction, verdict);
  if (!verdict.done) {
    throw await unfinished(plan.host, transaction, status, undefined, ran.runnerDied, ran.answered);
  }
  if (verdict.error) throw verdict.error;
  return { plan, confirmed: true, transaction, outcome: verdict.outcome, status };
}

interface Ran {
  readonly transaction: string;
  readonly verdict: TransactionVerdict;
  readonly status: RuntimeStatusResponse | null;
  readonly runnerDied?: string | undefined;
  readonly answered: boolean;
}

/** The transaction by the plan's route: the controller, or (with `recover`) the SSH receiver. */
async function applyPlan(
  options: BootstrapApplyOptions,
  plan: BootstrapPlan,
  host: HostRuntime,
  derived: DerivedPlan,
): Promise<Ran> {
  const { acceptanceTimeoutMs } = options;
  const onProgress = options.onProgress ?? (() => undefined);
  if (plan.route === 'controller') {
    const applied = await followableOnInterrupt(plan.host, () =>
      applyThroughController({
        client: host.client,
        kind: 'bootstrap',
        supervisor: plan.supervisor,
        planId: plan.id,
        target: plan.target,
        artifact: derived.artifact,
        acceptanceTimeoutMs,
        onProgress,
        // The status the plan was derived from lists the generations the node holds: a held
        // artifact is not uploaded again (contract §12).
        ...(derived.observation.through === 'controller'
          ? { held: derived.observation.status.generations }
          : {}),
        // fleet.yaml's controller URL and pin, as the plan bound them (issue 35).
        ...(plan.listen ? listenAndPin(plan.listen) : {}),
      }),
    );
    return { ...applied, answered: applied.answered ?? false };
  }
  if (!options.recover) {
    throw new core.FleetError(
      'HOST_UNREACHABLE',
      `${plan.host}'s controller does not answer: the plan's route is the SSH recovery receiver, which runs only with --recover`,
    );
  }
  const { transaction, verdict, status } = await applyOverSsh({
    host,
    plan,
    artifact: derived.artifact,
    acceptanceTimeoutMs,
    onProgress,
  });
  return { transaction, verdict, status, answered: false };
}
