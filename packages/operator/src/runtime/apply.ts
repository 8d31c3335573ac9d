/**
 * Applying a runtime through a reachable controller (contract §11 upgrade, §12 bootstrap): stage
 * (upload; the node checks the sha256 again), activate (a detached runner on the node restarts
 * the runtime and runs acceptance), then follow the transaction to its end — accepted, or rolled
 * back and verified, or manual recovery with the journal as evidence.
 */
import type {
  ControllerClient,
  RuntimeExpectation,
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
}

export interface AppliedRuntime {
  readonly transaction: string;
  readonly staged: {
    readonly buildId: string;
    readonly reused: boolean;
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
  progress(`uploading ${input.artifact.identity.file} (${input.artifact.bytes.length} bytes)`);
  const staged = await input.client.runtimeStage({
    operationId: newOperationId(),
    kind: input.kind,
    supervisor: input.supervisor,
    planId: input.planId,
    target: input.target,
    artifact: {
      sha256: input.artifact.identity.sha256,
      bytes: input.artifact.bytes.length,
      content: input.artifact.bytes.toString('base64'),
    },
  });
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
    staged: { buildId: staged.buildId, reused: staged.reused, prior: staged.prior },
    runnerLog: started.log,
    verdict: followed.verdict,
    status: followed.status,
  };
}
