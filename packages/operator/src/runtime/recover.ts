/**
 * `bootstrap apply --recover` (contract §12): the bundle — the plan and the artifact, no credentials,
 * no policy — goes over SSH to the node's fixed receiver command (the host key checked against
 * the pinned `hostKey` before anything is sent). The receiver stages and hands the transaction
 * to a detached runner; acceptance runs after the SSH session closed, and the transaction is
 * followed through the receiver's read-only `status`.
 */
import * as z from '@fleet/core/zod';
import type { BootstrapPlan, RuntimeStatusResponse, TransactionVerdict } from '@fleet/core';
import type { LoadedArtifact } from './artifact.js';
import { followTimeout, stepProgress } from './apply.js';
import { acceptedFromHere } from './accept-remote.js';
import { followTransaction } from './follow.js';
import { parseReceiverAnswer, recoveryTarget, statusOverSsh } from './bootstrap-plan.js';
import type { HostRuntime } from './host.js';

export const receiverApplyAnswerSchema = z.strictObject({
  transaction: z.string(),
  buildId: z.string(),
  treeHash: z.string(),
  reused: z.boolean(),
  prior: z.string().nullable(),
  runner: z.number().int().positive(),
  log: z.string(),
});

export async function applyOverSsh(input: {
  readonly host: HostRuntime;
  readonly plan: BootstrapPlan;
  readonly artifact: LoadedArtifact;
  readonly acceptanceTimeoutMs: number;
  readonly onProgress?: (line: string) => void;
}): Promise<{
  transaction: string;
  verdict: TransactionVerdict;
  status: RuntimeStatusResponse | null;
}> {
  const core = await import('@fleet/core');
  const { encodeBundle } = await import('../bootstrap/bundle.js');
  const { runRecoveryVerb } = await import('../bootstrap/ssh.js');
  const progress = input.onProgress ?? (() => undefined);
  const target = recoveryTarget(input.host);
  if (target === null) {
    throw new core.FleetError(
      'USAGE',
      `${input.host.host} has no SSH recovery configured (fleet.yaml ssh, credentials ssh.identityFile)`,
    );
  }
  const bundle = await encodeBundle(
    {
      plan: input.plan,
      acceptanceTimeoutMs: input.acceptanceTimeoutMs,
      // The release signature (ADR 0019) rides in the plan's envelope, which the bundle keeps
      // opaque: a receiver that predates it ignores it (and verifies nothing).
      ...(input.artifact.signature === undefined ? {} : { signature: input.artifact.signature }),
    },
    input.artifact.bytes,
  );
  progress(
    `sending the bundle (${bundle.length} bytes) to ${target.user}@${target.host}:${target.port}`,
  );
  const answer = await parseReceiverAnswer(
    await runRecoveryVerb(target, 'apply', bundle),
    receiverApplyAnswerSchema,
    'apply',
  );
  progress(
    `staged ${answer.buildId.slice(0, 12)}; runner ${answer.runner} on the node (log ${answer.log})`,
  );
  // A changed host key is never retried; anything else (a busy sshd) is.
  const { verdict, status } = await followTransaction(() => statusOverSsh(target), {
    transaction: answer.transaction,
    timeoutMs: followTimeout(input.acceptanceTimeoutMs),
    pollMs: 1000,
    fatal: (error) => {
      const { code } = core.asFleetError(error);
      return code === 'HOSTKEY_MISMATCH' || code === 'HOSTKEY_UNKNOWN';
    },
    onStatus: stepProgress(progress),
  });
  // The runner accepted from the node; the operator accepts from where it connects (issue 35):
  // after a recovery the controller must answer at fleet.yaml's URL, not only over SSH.
  return {
    transaction: answer.transaction,
    verdict: await acceptedFromHere(verdict, {
      client: input.host.client,
      target: input.plan.target,
      onProgress: progress,
    }),
    status,
  };
}
