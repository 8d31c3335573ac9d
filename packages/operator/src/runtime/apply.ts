/**
 * Applying a runtime through a reachable controller (contract §11 upgrade, §12 bootstrap): stage
 * (upload, the node checking the sha256 again — or, when the node's runtime status lists the
 * artifact's generation, no upload: the node verifies the generation it holds and stages from
 * it, and a node that does not hold it or predates the field gets the upload), activate (a
 * detached runner on the node restarts the runtime and runs acceptance), then follow the
 * transaction to its end — accepted, or rolled back and verified, or manual recovery with the
 * journal as evidence.
 */
import type {
  ControllerClient,
  RuntimeExpectation,
  RuntimeStageRequest,
  RuntimeStageResponse,
  RuntimeStatusResponse,
  TransactionVerdict,
} from '@fleet/core';
import type { LoadedArtifact } from './artifact.js';
import { followTransaction } from './follow.js';

export interface ApplyThroughController {
  readonly client: ControllerClient;
  readonly kind: 'upgrade' | 'bootstrap';
  readonly supervisor: string;
  readonly planId: string | null;
  readonly target: RuntimeExpectation;
  readonly artifact: LoadedArtifact;
  readonly acceptanceTimeoutMs: number;
  readonly onProgress?: (line: string) => void;
  /**
   * The generations the node lists (`RuntimeStatusResponse.generations`) when the caller has just
   * read its status; absent, the node is asked before anything is uploaded.
   */
  readonly held?: readonly string[];
}

export interface AppliedRuntime {
  readonly transaction: string;
  readonly staged: {
    readonly buildId: string;
    readonly reused: boolean;
    /** False when the node staged from the generation it held: no bytes were sent. */
    readonly uploaded: boolean;
    readonly prior: string | null;
  };
  readonly runnerLog: string;
  readonly verdict: TransactionVerdict;
  readonly status: RuntimeStatusResponse | null;
}

/** Generous: restart, acceptance, and a possible rollback with its own acceptance. */
export function followTimeout(acceptanceTimeoutMs: number): number {
  return acceptanceTimeoutMs * 2 + 180_000;
}

export async function applyThroughController(
  input: ApplyThroughController,
): Promise<AppliedRuntime> {
  const { newOperationId } = await import('@fleet/core');
  const progress = input.onProgress ?? (() => undefined);
  const { staged, uploaded } = await stageRuntime({ ...input, onProgress: progress });
  progress(
    `staged generation ${staged.buildId.slice(0, 12)}${staged.reused ? ' (already present, verified)' : ''}; transaction ${staged.transaction}`,
  );
  const started = await input.client.runtimeActivate({
    operationId: newOperationId(),
    transaction: staged.transaction,
    acceptanceTimeoutMs: input.acceptanceTimeoutMs,
  });
  progress(`activating: runner ${started.runner} on the node (log ${started.log})`);
  let lastStep = '';
  const followed = await followTransaction(
    () => input.client.runtimeStatus({ supervisor: input.supervisor }),
    {
      transaction: staged.transaction,
      timeoutMs: followTimeout(input.acceptanceTimeoutMs),
      onStatus: (status) => {
        const step = status.transaction?.steps.at(-1);
        if (step && step.step !== lastStep) {
          lastStep = step.step;
          progress(`${step.step}: ${step.detail}`);
        }
      },
    },
  );
  return {
    transaction: staged.transaction,
    staged: { buildId: staged.buildId, reused: staged.reused, uploaded, prior: staged.prior },
    runnerLog: started.log,
    verdict: followed.verdict,
    status: followed.status,
  };
}

/**
 * Whether a stage sent without the artifact's bytes should be sent again with them: the node does
 * not hold the generation verified (`GENERATION_NOT_HELD`), or predates stages without bytes (it
 * answers `BAD_REQUEST` naming `artifact.content`). Anything else is the answer.
 */
export function uploadInstead(error: { readonly code: string; readonly message: string }): boolean {
  if (error.code === 'GENERATION_NOT_HELD') return true;
  return error.code === 'BAD_REQUEST' && error.message.includes('artifact.content');
}

/**
 * The stage (contract §12): without the artifact's bytes when the node lists its generation
 * (`input.held`, or the status it is asked for now), else — or when the node cannot stage it
 * without them — with.
 */
export async function stageRuntime(
  input: Omit<ApplyThroughController, 'acceptanceTimeoutMs'>,
): Promise<{ staged: RuntimeStageResponse; uploaded: boolean }> {
  const { asFleetError, newOperationId } = await import('@fleet/core');
  const progress = input.onProgress ?? (() => undefined);
  const held =
    input.held ?? (await input.client.runtimeStatus({ supervisor: input.supervisor })).generations;
  const { identity, bytes } = input.artifact;
  const request = (content: string | undefined): RuntimeStageRequest => ({
    operationId: newOperationId(),
    kind: input.kind,
    supervisor: input.supervisor,
    planId: input.planId,
    target: input.target,
    artifact: {
      sha256: identity.sha256,
      bytes: bytes.length,
      ...(content === undefined ? {} : { content }),
    },
  });
  if (held.includes(identity.sha256)) {
    progress(`the node holds generation ${identity.sha256.slice(0, 12)}: staging it, no upload`);
    try {
      return { staged: await input.client.runtimeStage(request(undefined)), uploaded: false };
    } catch (error) {
      const failure = asFleetError(error);
      if (!uploadInstead(failure)) throw error;
      progress(`the node cannot stage it without the artifact (${failure.code}): uploading`);
    }
  }
  progress(`uploading ${identity.file} (${bytes.length} bytes)`);
  const staged = await input.client.runtimeStage(request(bytes.toString('base64')));
  return { staged, uploaded: true };
}
