/**
 * `bootstrap apply --recover` (contract §12): the bundle — the plan and the artifact, no credentials,
 * no policy — goes over SSH to the node's fixed receiver command (the host key checked against
 * the pinned `hostKey` before anything is sent). The receiver stages and hands the transaction
 * to a detached runner; acceptance runs after the SSH session closed, and the transaction is
 * followed through the receiver's read-only `status`.
 */
import * as z from '@fleet/core/zod';
import type { BootstrapPlan, RuntimeStatusResponse, TransactionVerdict } from '@fleet/core';
import * as core from '@fleet/core';
import type { LoadedArtifact } from './artifact.js';
import { followTimeout, stepProgress } from './apply.js';
import { acceptedFromHere } from './accept-remote.js';
import { followTransaction } from './follow.js';
import { parseReceiverAnswer, recoveryTarget, statusOverSsh } from './bootstrap-plan.js';
import type { HostRuntime } from './host.js';
import { encodeBundle } from '../bootstrap/bundle.js';
import { runRecoveryVerb } from '../bootstrap/ssh.js';

export const receiverApplyAnswerSchema = z.strictObject({
  transaction: z.string(),
  buildId: z.string(),
  treeHash: z.string(),
  reused: z.boolean(),
  prior: z.string().nullable(),
  runner: z.number().int().positive(),
  log: z.string(),
});

/**
 * Whether a plan-only bundle should be sent again with the artifact: the node does not hold the
 * generation verified (`GENERATION_NOT_HELD`), or its receiver predates `held` (it refuses the
 * unknown field, `GENERATION_INVALID` naming it).
 */
export function sendArtifactInstead(error: { readonly code: string; readonly message: string }) {
  return (
    error.code === 'GENERATION_NOT_HELD' ||
    (error.code === 'GENERATION_INVALID' && error.message.includes('artifact.held'))
  );
}

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
  const progress = input.onProgress ?? (() => undefined);
  const target = recoveryTarget(input.host);
  if (target === null) {
    throw new core.FleetError(
      'USAGE',
      `${input.host.host} has no SSH recovery configured (fleet.yaml ssh, credentials ssh.identityFile)`,
    );
  }
  const envelope = recoveryEnvelope(input.plan, input.acceptanceTimeoutMs, input.artifact);
  const answer = await sendBundle(target, envelope, input.artifact, progress);
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

type RecoveryTarget = NonNullable<ReturnType<typeof recoveryTarget>>;
type ReceiverApplyAnswer = z.infer<typeof receiverApplyAnswerSchema>;

/**
 * The plan's envelope in the bundle (pure). The release signature (ADR 0019) rides in it, which
 * the bundle keeps opaque: a receiver that predates it ignores it (and verifies nothing).
 */
export function recoveryEnvelope(
  plan: BootstrapPlan,
  acceptanceTimeoutMs: number,
  artifact: Pick<LoadedArtifact, 'signature'>,
): { plan: BootstrapPlan; acceptanceTimeoutMs: number; signature?: string } {
  return {
    plan,
    acceptanceTimeoutMs,
    ...(artifact.signature === undefined ? {} : { signature: artifact.signature }),
  };
}

/**
 * Sends the bundle to the receiver's `apply`: the plan only when the node holds the generation
 * (issue 35: its recovery status lists it), the artifact too when it does not or cannot use it.
 */
async function sendBundle(
  target: RecoveryTarget,
  envelope: object,
  artifact: LoadedArtifact,
  progress: (line: string) => void,
): Promise<ReceiverApplyAnswer> {
  const held = await statusOverSsh(target)
    .then((status) => status.generations.includes(artifact.identity.sha256))
    .catch(() => false);
  try {
    return await sendOnce(target, envelope, artifact, held, progress);
  } catch (error) {
    if (!held || !sendArtifactInstead(core.asFleetError(error))) throw error;
    progress(`the node cannot stage it without the artifact (${core.asFleetError(error).code})`);
    return await sendOnce(target, envelope, artifact, false, progress);
  }
}

/** One `apply` over SSH: the bundle with the artifact's bytes, or naming the held generation. */
async function sendOnce(
  target: RecoveryTarget,
  envelope: object,
  artifact: LoadedArtifact,
  held: boolean,
  progress: (line: string) => void,
): Promise<ReceiverApplyAnswer> {
  const bundle = await encodeBundle(
    envelope,
    held ? { held: artifact.identity.sha256 } : artifact.bytes,
  );
  progress(
    held
      ? `the node holds generation ${artifact.identity.sha256.slice(0, 12)}: sending the plan only (${bundle.length} bytes)`
      : `sending the bundle (${bundle.length} bytes) to ${target.user}@${target.host}:${target.port}`,
  );
  return parseReceiverAnswer(
    await runRecoveryVerb(target, 'apply', bundle),
    receiverApplyAnswerSchema,
    'apply',
  );
}
