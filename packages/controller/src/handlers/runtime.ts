/**
 * The runtime lifecycle routes (core's wire/runtime.ts; contract §11, §12). Stage opens a journal
 * transaction and stages the generation; activate and rollback hand the transaction to a
 * detached runner (lifecycle/runner.ts), started only after this answer is flushed — the runner
 * restarts the controller that answers; status reconciles the journal with observation.
 */
import {
  FleetError,
  isFleetError,
  type RuntimeActivateRequest,
  type RuntimeRollbackRequest,
  type RuntimeStageRequest,
  type RuntimeStartedResponse,
  type RuntimeStatusRequest,
  type SupervisorKind,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { lastTransaction, RuntimeJournal } from '../generations/journal.js';
import { runtimeLockHolder, withRuntimeLock } from '../generations/lock.js';
import { expectationOf } from '../lifecycle/expectation.js';
import { RESUMABLE, rollbackTarget } from '../lifecycle/journal-history.js';
import { abandonStaged, stageRelease } from '../lifecycle/stage.js';
import { admissionDetail } from '../lifecycle/signature.js';
import { spawnRunner, type RunnerStart } from '../lifecycle/spawn.js';
import { runtimeStatusOf } from '../lifecycle/status.js';
import { authorize } from '../tokens/auth.js';
import { identityOf } from './identity.js';
import type { Handler, RequestContext } from './types.js';

/** A bootstrap transaction needs node-admin:bootstrap; an upgrade runtime:upgrade. */
function requireKindScope(ctx: RequestContext, kind: 'upgrade' | 'bootstrap' | 'rollback'): void {
  authorize(
    ctx.principal,
    ctx.route,
    kind === 'upgrade' ? 'runtime:upgrade' : 'node-admin:bootstrap',
  );
}

export const runtimeStage: Handler = async (ctx) => {
  const { runtime } = ctx;
  const request = ctx.body as RuntimeStageRequest;
  requireKindScope(ctx, request.kind);
  // No content: the node stages from the generation it holds (contract §12), verified again.
  const content = request.artifact.content;
  const bytes = content === undefined ? null : Buffer.from(content, 'base64');
  if (bytes !== null && bytes.length !== request.artifact.bytes) {
    throw new FleetError(
      'GENERATION_INVALID',
      `the artifact arrived with ${bytes.length} bytes, not ${request.artifact.bytes}; nothing was staged`,
    );
  }
  const node = createNodeContext({ home: runtime.home, nodeId: runtime.nodeId });
  const { admission, staged } = await stageRelease({
    home: runtime.home,
    platform: node.platform,
    registry: runtime.registry,
    nodeId: runtime.nodeId,
    kind: request.kind,
    supervisor: request.supervisor,
    planId: request.planId,
    target: request.target,
    artifact: { sha256: request.artifact.sha256, bytes },
    prior: expectationOf(await identityOf(runtime)),
    ...(request.listen === undefined ? {} : { listen: request.listen }),
    ...(request.artifact.signature === undefined ? {} : { signature: request.artifact.signature }),
  });
  return {
    status: 200,
    body: staged,
    // Who signed what was staged (ADR 0019), in the stage's audit record, not in the answer.
    auditDetail: admissionDetail(admission),
    undo: () =>
      abandonStaged(runtime.home, staged.transaction, 'the audit record could not be written'),
  };
};

async function started(
  ctx: RequestContext,
  mode: 'activate' | 'rollback' | 'resume',
  transaction: string,
  acceptanceTimeoutMs: number | undefined,
  supervisor: string | null,
) {
  const holder = await runtimeLockHolder(ctx.runtime.home);
  if (holder !== null) {
    throw new FleetError('LOCKED', `a runtime operation (pid ${holder}) is in progress`);
  }
  let runner: RunnerStart;
  try {
    runner = await spawnRunner({
      home: ctx.runtime.home,
      nodeId: ctx.runtime.nodeId,
      registry: ctx.runtime.registry,
      supervisor,
      mode,
      transaction,
      ...(acceptanceTimeoutMs === undefined ? {} : { acceptanceTimeoutMs }),
    });
  } catch (error) {
    // Nothing was activated: the transaction is closed, not left open for status to puzzle over.
    if (mode === 'activate') await closeUnstarted(ctx.runtime.home, transaction, error);
    throw error;
  }
  const body: RuntimeStartedResponse = { transaction, runner: runner.pid, log: runner.log };
  return {
    status: 200,
    body,
    afterResponse: () => runner.go(),
    undo: () => Promise.resolve(runner.cancel()),
  };
}

/** Journals `failed` + `end` for a transaction whose runner could not be started. */
async function closeUnstarted(home: string, transaction: string, error: unknown): Promise<void> {
  await withRuntimeLock(home, async () => {
    const journal = new RuntimeJournal(home);
    const txn = lastTransaction(await journal.readTrusted());
    if (!txn || txn.id !== transaction || txn.ended || txn.last.step !== 'staged') return;
    await journal.append(transaction, 'failed', {
      during: 'activate',
      code: isFleetError(error) ? error.code : 'ACTION_FAILED',
      message: `the runner could not be started: ${(error as Error).message}`.slice(0, 500),
      criteria: [],
    });
    await journal.append(transaction, 'end', { outcome: 'failed' });
  });
}

export const runtimeActivate: Handler = async (ctx) => {
  const request = ctx.body as RuntimeActivateRequest;
  const txn = lastTransaction(await new RuntimeJournal(ctx.runtime.home).readTrusted());
  if (request.resume === true) return resume(ctx, request, txn);
  if (!txn || txn.id !== request.transaction || txn.ended || txn.last.step !== 'staged') {
    throw new FleetError(
      'PRECONDITION_FAILED',
      `transaction ${request.transaction} is not open at "staged"${txn ? ` (the last is ${txn.id} at "${txn.last.step}")` : ''}`,
    );
  }
  requireKindScope(ctx, txn.begin.data.kind);
  return started(ctx, 'activate', txn.id, request.acceptanceTimeoutMs, txn.begin.data.supervisor);
};

/**
 * `resume` (issue 36): the interrupted transaction is resumed only when its status recommends it
 * (`resume-acceptance`: open past `activated`, no runner alive, the target running and passing
 * acceptance); the runner checks it again under the runtime lock.
 */
async function resume(
  ctx: RequestContext,
  request: RuntimeActivateRequest,
  txn: ReturnType<typeof lastTransaction>,
) {
  if (!txn || txn.id !== request.transaction || txn.ended || !RESUMABLE.has(txn.last.step)) {
    throw new FleetError(
      'PRECONDITION_FAILED',
      `transaction ${request.transaction} is not open past "activated"${txn ? ` (the last is ${txn.id} at "${txn.last.step}"${txn.ended ? ', ended' : ''})` : ''}: nothing to resume`,
    );
  }
  requireKindScope(ctx, txn.begin.data.kind);
  const node = createNodeContext({ home: ctx.runtime.home, nodeId: ctx.runtime.nodeId });
  const status = await runtimeStatusOf({
    ctx: node,
    registry: ctx.runtime.registry,
    supervisor: null,
    identity: await identityOf(ctx.runtime),
  });
  if (status.next !== 'resume-acceptance') {
    throw new FleetError(
      'PRECONDITION_FAILED',
      `transaction ${txn.id} (open at "${txn.last.step}") cannot be resumed: its status is ${status.state}, next ${status.next}${status.problems.length ? ` (${status.problems.join('; ')})` : ''}`,
    );
  }
  return started(ctx, 'resume', txn.id, request.acceptanceTimeoutMs, txn.begin.data.supervisor);
}

export const runtimeRollback: Handler = async (ctx) => {
  const request = ctx.body as RuntimeRollbackRequest;
  // The runner decides what the rollback is (finishing an open transaction, or a new one); what
  // cannot be rolled back is refused here, before anything starts.
  const journal = await new RuntimeJournal(ctx.runtime.home).readTrusted();
  const open = lastTransaction(journal);
  if ((!open || open.ended) && rollbackTarget(journal) === null) {
    throw new FleetError(
      'NO_PRIOR_GENERATION',
      'no accepted transaction with a prior generation is journaled on this node: there is nothing to roll back to; nothing was changed',
    );
  }
  return started(
    ctx,
    'rollback',
    request.operationId,
    request.acceptanceTimeoutMs,
    open?.begin.data.supervisor ?? null,
  );
};

export const runtimeStatus: Handler = async ({ runtime, body }) => {
  const request = body as RuntimeStatusRequest;
  const node = createNodeContext({ home: runtime.home, nodeId: runtime.nodeId });
  const status = await runtimeStatusOf({
    ctx: node,
    registry: runtime.registry,
    supervisor: (request.supervisor as SupervisorKind | undefined) ?? null,
    identity: await identityOf(runtime),
  });
  return { status: 200, body: status };
};
