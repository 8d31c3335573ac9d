/**
 * The recovery receiver's runtime verbs (contract §12), for a node whose controller is unavailable:
 *
 * - `status`: the journal reconciled with observation (pointer, supervisor, live identity asked
 *   with a short-lived node-local token) — the same answer as the controller's `runtime-status`.
 * - `apply`: the bundle (plan + artifact) read from stdin, the plan's own id checked, the node's
 *   bootstrap policy checked, the node id checked against what the supervisor runs; the artifact
 *   staged in a journaled transaction and handed to a runner started out of the supervisor's
 *   reach, which restarts and accepts only after this SSH session has closed (its go is the end
 *   of this process).
 *
 * `apply` records its stage and its activate (the runner started) in the node's audit log, and a
 * refusal under the step it refused (`runtime-stage`, `runtime-activate`): a record that cannot be
 * written undoes its step — the transaction abandoned, the runner ended before its go — and the
 * answer is `AUDIT_UNAVAILABLE` (docs/audit-log.md, "What fails closed").
 *
 * The bundle brings no credentials and no policy: the node's own decide.
 */
import type { ControllerListen, PlannedListen } from '@fleet/core';
import type { StagedTransaction } from '@fleet/controller';
import * as controller from '@fleet/controller';
import * as core from '@fleet/core';
import type { Bundle } from './bundle.js';
import type { ReceiverAuditRecord, ReceiverContext, ReceiverHandler } from './receiver-context.js';
import { readBundle } from './bundle.js';

/** The listen a plan binds, without the pin (which the node does not keep). */
function listenOf(planned: PlannedListen): ControllerListen {
  const { fingerprint: _pin, ...listen } = planned;
  return listen;
}

function nodeContext(context: ReceiverContext, nodeId: string) {
  return controller.createNodeContext({ home: context.home, nodeId });
}

export const status: ReceiverHandler = async (context) => {
  const registry = await context.loadRegistry();
  const ctx = nodeContext(context, 'unknown');
  const supervised = await controller.nodeSupervisor(registry, ctx);
  const probe = new controller.LocalIdentityProbe(context.home);
  try {
    const identity = await probe.identity(supervised?.observed?.command, 'this node');
    const answer = await controller.runtimeStatusOf({
      ctx,
      registry,
      supervisor: supervised?.adapter.supervisor ?? null,
      identity,
    });
    context.stdout.write(`${JSON.stringify(answer)}\n`);
    return 0;
  } finally {
    await probe.release();
  }
};

/** Runs `apply`, recording a refusal under the step it was refused at. */
export const apply: ReceiverHandler = async (context) => {
  const step = { operation: 'runtime-stage' };
  try {
    return await applyBundle(context, step);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    await context
      .audit({
        operation: step.operation,
        outcome: 'failed',
        code: typeof code === 'string' ? code : 'INTERNAL',
        detail: (error as Error).message.slice(0, 500),
      })
      .catch(() => undefined);
    throw error;
  }
};

async function applyBundle(context: ReceiverContext, step: { operation: string }): Promise<number> {
  const applied = await readAppliedBundle(context);
  const { plan } = applied;
  await context.log(`apply: plan ${plan.id} for ${plan.nodeId}, artifact ${plan.artifact.sha256}`);
  const registry = await context.loadRegistry();
  const ctx = nodeContext(context, plan.nodeId);
  const supervised = await controller.nodeSupervisor(registry, ctx, plan.supervisor);
  const probe = new controller.LocalIdentityProbe(context.home);
  try {
    refuseOtherNode(plan.nodeId, supervised?.observed?.nodeIdFlag, "this node's supervisor runs");
    const identity = await probe.identity(supervised?.observed?.command, plan.nodeId);
    refuseOtherNode(plan.nodeId, identity?.nodeId, "this node's runtime is");
    const prior =
      identity === null
        ? await controller.priorFromPointer(context.home, ctx.platform, plan.nodeId)
        : controller.expectationOf(identity);
    const staged = await stageBundle(controller, {
      home: context.home,
      platform: ctx.platform,
      registry,
      applied,
      prior,
    });
    await auditOrAbandon(controller, context, staged.transaction, {
      operation: 'runtime-stage',
      outcome: 'ok',
      code: null,
      detail: `bootstrap plan ${plan.id} for ${plan.nodeId}: transaction ${staged.transaction} staged, artifact ${plan.artifact.sha256}`,
    });
    step.operation = 'runtime-activate';
    const runner = await controller.spawnRunner({
      home: context.home,
      nodeId: plan.nodeId,
      registry,
      supervisor: plan.supervisor,
      mode: 'activate',
      transaction: staged.transaction,
      acceptanceTimeoutMs: applied.acceptanceTimeoutMs,
    });
    await auditOrAbandon(
      controller,
      context,
      staged.transaction,
      {
        operation: 'runtime-activate',
        outcome: 'ok',
        code: null,
        detail: `transaction ${staged.transaction}: runner ${runner.pid} (${runner.via}) activates it once this SSH session has ended`,
      },
      () => runner.cancel(),
    );
    await context.log(
      `apply: transaction ${staged.transaction} staged; runner ${runner.pid} (${runner.via})`,
    );
    // The answer keeps its shape (an older operator reads it strictly): the fingerprint was
    // checked above.
    const { tls: _checked, ...answer } = staged;
    context.stdout.write(`${JSON.stringify({ ...answer, runner: runner.pid, log: runner.log })}\n`);
    // No go: the runner begins when this process (and with it the SSH session) has ended.
    return 0;
  } finally {
    await probe.release();
  }
}

type Controller = typeof import('@fleet/controller');

/** The bundle on stdin, its plan read and matched with its artifact. */
interface AppliedBundle {
  readonly bundle: Bundle;
  readonly plan: ReturnType<typeof core.readPlan>;
  /** The release signature fleet.yaml pins, when the operator sent one. */
  readonly signature: string | undefined;
  readonly acceptanceTimeoutMs: number;
}

/**
 * Reads the bundle from stdin and its envelope (plan, acceptance timeout, signature); refuses a
 * bundle whose artifact is not its plan's (`GENERATION_INVALID`).
 */
async function readAppliedBundle(context: ReceiverContext): Promise<AppliedBundle> {
  const bundle = await readBundle(context.stdin);
  const envelope = bundle.plan as {
    plan?: unknown;
    acceptanceTimeoutMs?: unknown;
    signature?: unknown;
  } | null;
  const signature = typeof envelope?.signature === 'string' ? envelope.signature : undefined;
  const plan = core.readPlan(envelope?.plan, 'the bundle');
  if (plan.artifact.sha256 !== bundle.artifact.sha256) {
    throw new core.FleetError(
      'GENERATION_INVALID',
      "the bundle's artifact is not the plan's; nothing was staged",
    );
  }
  const acceptanceTimeoutMs = acceptanceTimeoutOf(envelope?.acceptanceTimeoutMs);
  return { bundle, plan, signature, acceptanceTimeoutMs };
}

/** The acceptance timeout a bundle asks for, or the default when it is not a whole number in range (pure). */
export function acceptanceTimeoutOf(timeout: unknown): number {
  const { min, max } = core.ACCEPTANCE_TIMEOUT_MS;
  return typeof timeout === 'number' &&
    Number.isInteger(timeout) &&
    timeout >= min &&
    timeout <= max
    ? timeout
    : core.ACCEPTANCE_TIMEOUT_MS.default;
}

/** `NODE_ID_MISMATCH` when this node runs another node id than the plan's: nothing is staged. */
function refuseOtherNode(planned: string, running: string | undefined, what: string): void {
  if (running !== undefined && running !== planned) {
    throw new core.FleetError(
      'NODE_ID_MISMATCH',
      `the plan is for node ${planned}, but ${what} ${running}; nothing was staged`,
    );
  }
}

/**
 * Stages the bundle's artifact in a journaled transaction, then checks the certificate the node
 * made against the one fleet.yaml pins: a refusal abandons the transaction before any runner.
 */
async function stageBundle(
  controller: Controller,
  input: {
    readonly home: string;
    readonly platform: Parameters<Controller['priorFromPointer']>[1];
    readonly registry: Awaited<ReturnType<ReceiverContext['loadRegistry']>>;
    readonly applied: AppliedBundle;
    readonly prior: Awaited<ReturnType<Controller['priorFromPointer']>>;
  },
): Promise<StagedTransaction> {
  const { plan, bundle, signature } = input.applied;
  const staged = await controller.stageTransaction({
    home: input.home,
    platform: input.platform,
    registry: input.registry,
    nodeId: plan.nodeId,
    kind: 'bootstrap',
    supervisor: plan.supervisor,
    planId: plan.id,
    target: plan.target,
    // A held generation (no bytes sent) is staged from what the node holds, verified again.
    artifact: { sha256: bundle.artifact.sha256, bytes: bundle.data },
    prior: input.prior,
    // The release signature the operator's fleet.yaml pins (ADR 0019): checked against this
    // node's policy before anything is staged.
    ...(signature === undefined ? {} : { signature }),
    // fleet.yaml's controller URL, as the plan bound it (issue 35): the runner installs it.
    ...(plan.listen === undefined ? {} : { listen: listenOf(plan.listen) }),
  });
  // The certificate the node made must be the one fleet.yaml pins, or every later verb would
  // refuse the new controller: closed before any runner starts, nothing activated. Here, not
  // at the operator: on this path the runner starts as soon as this session ends.
  const refusal = core.pinnedCertificateRefusal({
    host: plan.host,
    pinned: plan.listen?.fingerprint ?? null,
    actual: staged.tls?.fingerprint,
  });
  if (refusal !== null) {
    await controller.abandonStaged(input.home, staged.transaction, refusal.message, refusal.code);
    throw refusal;
  }
  return staged;
}

/**
 * Appends `record` to the audit log; when it cannot be written, undoes its step — `undo` first
 * (the runner ended before its go), then the transaction abandoned — and throws
 * (docs/audit-log.md, "What fails closed").
 */
async function auditOrAbandon(
  controller: Controller,
  context: ReceiverContext,
  transaction: string,
  record: ReceiverAuditRecord,
  undo: () => void = () => undefined,
): Promise<void> {
  try {
    await context.audit(record);
  } catch (error) {
    undo();
    await controller.abandonStaged(
      context.home,
      transaction,
      'the audit record could not be written',
      'AUDIT_UNAVAILABLE',
    );
    throw error;
  }
}
