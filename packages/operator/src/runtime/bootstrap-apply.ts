/**
 * `fleet bootstrap apply` (contract §12), the service: the plan file is read and derived again —
 * it must be unchanged (`PLAN_MISMATCH`, exit 3), so a plan edited after it was written is
 * refused the same way — and, when confirmed, applied on the plan's route: through the controller
 * (upload unless held, stage, activate, accept or roll back), or, only with `recover`, over SSH to
 * the node's fixed recovery receiver. The verdict goes into the operator's log; a transaction the
 * node has not finished, or one that failed, is thrown as its FleetError.
 */
import { readFile } from 'node:fs/promises';
import type {
  BootstrapPlan,
  ControllerListen,
  PlannedListen,
  RuntimeStatusResponse,
  TransactionVerdict,
} from '@fleet/core';
import * as core from '@fleet/core';
import type { DerivedPlan } from './bootstrap-plan.js';
import type { HostRuntime } from './host.js';
import { loadHostRuntime } from './host.js';
import { derivePlan } from './bootstrap-plan.js';
import { recordRuntimeVerb } from './record.js';
import { unfinished } from './follow.js';
import { applyThroughController } from './apply.js';
import { followableOnInterrupt } from './interrupt.js';
import { applyOverSsh } from './recover.js';

/** The plan, for the command to print (pure). */
export { renderBootstrapPlan } from './render.js';

export interface BootstrapApplyInput {
  readonly root: string;
  /** The plan file (`fleet bootstrap plan --out`). */
  readonly planFile: string;
  /** Really apply; without it the plan is only checked. */
  readonly confirm: boolean;
  /** The controller is unavailable: use the SSH recovery receiver (a plan whose route is ssh). */
  readonly recover: boolean;
  readonly acceptanceTimeoutMs: number;
  /** Per request. */
  readonly timeoutMs: number;
  /** Each step of the apply as it happens (stderr). */
  readonly onProgress?: (line: string) => void;
}

export type BootstrapApplied =
  | { readonly plan: BootstrapPlan; readonly confirmed: false }
  | {
      readonly plan: BootstrapPlan;
      readonly confirmed: true;
      readonly transaction: string;
      readonly outcome: Extract<TransactionVerdict, { done: true }>['outcome'];
      readonly status: RuntimeStatusResponse | null;
    };

/** What a route's apply answers. */
interface RouteApplied {
  readonly transaction: string;
  readonly verdict: TransactionVerdict;
  readonly status: RuntimeStatusResponse | null;
  readonly runnerDied?: string;
  readonly answered?: boolean;
}

/** What each route's apply needs. */
interface RouteState {
  readonly input: BootstrapApplyInput;
  readonly plan: BootstrapPlan;
  readonly host: HostRuntime;
  readonly derived: DerivedPlan;
}

/** Checks the plan against a fresh derivation and, with `confirm`, applies it until accepted. */
export async function applyBootstrapPlan(input: BootstrapApplyInput): Promise<BootstrapApplied> {
  const plan = core.readPlan(
    core.parseStrictJson(await readFile(input.planFile, 'utf8'), input.planFile, 'USAGE'),
    input.planFile,
  );
  const host = await loadHostRuntime(input.root, plan.host, { timeoutMs: input.timeoutMs });
  const derived = await derivePlan(host, plan.artifact.file);
  checkPlanUnchanged(input.planFile, plan, derived);
  if (!input.confirm) return { plan, confirmed: false };
  const state: RouteState = { input, plan, host, derived };
  const {
    transaction,
    verdict,
    status,
    runnerDied,
    answered = false,
  } = plan.route === 'controller'
    ? await applyThroughControllerRoute(state)
    : await applyThroughRecovery(state);
  await recordRuntimeVerb('bootstrap apply', plan.host, transaction, verdict);
  if (!verdict.done) {
    throw unfinished(plan.host, transaction, status, undefined, runnerDied, answered);
  }
  if (verdict.error) throw verdict.error;
  return { plan, confirmed: true, transaction, outcome: verdict.outcome, status };
}

/** The plan derived again must be the plan read: else PLAN_MISMATCH, naming what changed. */
function checkPlanUnchanged(planFile: string, plan: BootstrapPlan, derived: DerivedPlan): void {
  const again = core.sealPlan(derived.body);
  if (again.id === plan.id) return;
  const { id: _old, ...before } = plan;
  const { id: _new, ...after } = again;
  throw new core.FleetError(
    'PLAN_MISMATCH',
    `the plan changed since ${planFile} was written (${core.planDifferences(before, after).join(', ')}); nothing was applied`,
    {
      suggestions: [`review a new plan: fleet bootstrap plan ${plan.host} --out NEW.plan.json`],
    },
  );
}

/** A plan's listen as the stage sends it, and the pin the node's certificate must match. */
function listenAndPin(planned: PlannedListen): {
  listen: ControllerListen;
  pinned: string | null;
} {
  const { fingerprint, ...listen } = planned;
  return { listen, pinned: fingerprint };
}

/** The controller answers: upload, stage, activate, accept or roll back through it. */
async function applyThroughControllerRoute(state: RouteState): Promise<RouteApplied> {
  const { plan, derived, input } = state;
  return followableOnInterrupt(plan.host, () =>
    applyThroughController({
      client: state.host.client,
      kind: 'bootstrap',
      supervisor: plan.supervisor,
      planId: plan.id,
      target: plan.target,
      artifact: derived.artifact,
      acceptanceTimeoutMs: input.acceptanceTimeoutMs,
      ...(input.onProgress ? { onProgress: input.onProgress } : {}),
      // The status the plan was derived from lists the generations the node holds: a held
      // artifact is not uploaded again (contract §12).
      ...(derived.observation.through === 'controller'
        ? { held: derived.observation.status.generations }
        : {}),
      // fleet.yaml's controller URL and pin, as the plan bound them (issue 35).
      ...(plan.listen ? listenAndPin(plan.listen) : {}),
    }),
  );
}

/** The controller does not answer: only with `recover`, the bundle goes over SSH. */
async function applyThroughRecovery(state: RouteState): Promise<RouteApplied> {
  const { plan, input } = state;
  if (!input.recover) {
    throw new core.FleetError(
      'HOST_UNREACHABLE',
      `${plan.host}'s controller does not answer: the plan's route is the SSH recovery receiver, which runs only with --recover`,
    );
  }
  return applyOverSsh({
    host: state.host,
    plan,
    artifact: state.derived.artifact,
    acceptanceTimeoutMs: input.acceptanceTimeoutMs,
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
  });
}
