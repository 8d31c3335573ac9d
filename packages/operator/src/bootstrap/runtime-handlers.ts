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
import type { ReceiverContext, ReceiverHandler } from './receiver-context.js';

/** The listen a plan binds, without the pin (which the node does not keep). */
function listenOf(planned: PlannedListen): ControllerListen {
  const { fingerprint: _pin, ...listen } = planned;
  return listen;
}

async function nodeContext(context: ReceiverContext, nodeId: string) {
  const { createNodeContext } = await import('@fleet/controller');
  return createNodeContext({ home: context.home, nodeId });
}

export const status: ReceiverHandler = async (context) => {
  const controller = await import('@fleet/controller');
  const registry = await context.loadRegistry();
  const ctx = await nodeContext(context, 'unknown');
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
  const core = await import('@fleet/core');
  const controller = await import('@fleet/controller');
  const { readBundle } = await import('./bundle.js');
  const bundle = await readBundle(context.stdin);
  const envelope = bundle.plan as {
    plan?: unknown;
    acceptanceTimeoutMs?: unknown;
    signature?: unknown;
  } | null;
  const signature = typeof envelope?.signature === 'string' ? envelope.signature : undefined;
  const plan = core.readPlan(envelope?.plan, 'the bundle');
  const timeout = envelope?.acceptanceTimeoutMs;
  const acceptanceTimeoutMs =
    typeof timeout === 'number' &&
    Number.isInteger(timeout) &&
    timeout >= core.ACCEPTANCE_TIMEOUT_MS.min &&
    timeout <= core.ACCEPTANCE_TIMEOUT_MS.max
      ? timeout
      : core.ACCEPTANCE_TIMEOUT_MS.default;
  if (plan.artifact.sha256 !== bundle.artifact.sha256) {
    throw new core.FleetError(
      'GENERATION_INVALID',
      "the bundle's artifact is not the plan's; nothing was staged",
    );
  }
  await context.log(`apply: plan ${plan.id} for ${plan.nodeId}, artifact ${plan.artifact.sha256}`);
  const registry = await context.loadRegistry();
  const ctx = await nodeContext(context, plan.nodeId);
  const supervised = await controller.nodeSupervisor(registry, ctx, plan.supervisor);
  const probe = new controller.LocalIdentityProbe(context.home);
  try {
    const running = supervised?.observed?.nodeIdFlag;
    if (running !== undefined && running !== plan.nodeId) {
      throw new core.FleetError(
        'NODE_ID_MISMATCH',
        `the plan is for node ${plan.nodeId}, but this node's supervisor runs ${running}; nothing was staged`,
      );
    }
    const identity = await probe.identity(supervised?.observed?.command, plan.nodeId);
    if (identity !== null && identity.nodeId !== plan.nodeId) {
      throw new core.FleetError(
        'NODE_ID_MISMATCH',
        `the plan is for node ${plan.nodeId}, but this node's runtime is ${identity.nodeId}; nothing was staged`,
      );
    }
    const prior =
      identity === null
        ? await controller.priorFromPointer(context.home, ctx.platform, plan.nodeId)
        : controller.expectationOf(identity);
    const staged = await controller.stageTransaction({
      home: context.home,
      platform: ctx.platform,
      registry,
      nodeId: plan.nodeId,
      kind: 'bootstrap',
      supervisor: plan.supervisor,
      planId: plan.id,
      target: plan.target,
      // A held generation (no bytes sent) is staged from what the node holds, verified again.
      artifact: { sha256: bundle.artifact.sha256, bytes: bundle.data },
      prior,
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
      await controller.abandonStaged(
        context.home,
        staged.transaction,
        refusal.message,
        refusal.code,
      );
      throw refusal;
    }
    try {
      await context.audit({
        operation: 'runtime-stage',
        outcome: 'ok',
        code: null,
        detail: `bootstrap plan ${plan.id} for ${plan.nodeId}: transaction ${staged.transaction} staged, artifact ${plan.artifact.sha256}`,
      });
    } catch (error) {
      await controller.abandonStaged(
        context.home,
        staged.transaction,
        'the audit record could not be written',
        'AUDIT_UNAVAILABLE',
      );
      throw error;
    }
    step.operation = 'runtime-activate';
    const runner = await controller.spawnRunner({
      home: context.home,
      nodeId: plan.nodeId,
      registry,
      supervisor: plan.supervisor,
      mode: 'activate',
      transaction: staged.transaction,
      acceptanceTimeoutMs,
    });
    try {
      await context.audit({
        operation: 'runtime-activate',
        outcome: 'ok',
        code: null,
        detail: `transaction ${staged.transaction}: runner ${runner.pid} (${runner.via}) activates it once this SSH session has ended`,
      });
    } catch (error) {
      runner.cancel();
      await controller.abandonStaged(
        context.home,
        staged.transaction,
        'the audit record could not be written',
        'AUDIT_UNAVAILABLE',
      );
      throw error;
    }
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
