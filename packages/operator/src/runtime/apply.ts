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
  ControllerListen,
  RuntimeExpectation,
  RuntimeStageRequest,
  RuntimeStageResponse,
  RuntimeStatusResponse,
  TransactionVerdict,
} from '@fleet/core';
import { newOperationId, pinnedCertificateRefusal, asFleetError } from '@fleet/core';
import type { LoadedArtifact } from './artifact.js';
import { followTransaction } from './follow.js';
import { acceptedFromHere } from './accept-remote.js';

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
  /**
   * Where the new controller listens (fleet.yaml's `controller` URL, core `controllerListen`):
   * sent with the stage, so the runner installs it (issue 35). A node that predates the field is
   * staged without it, and keeps its unit's flags.
   */
  readonly listen?: ControllerListen;
  /** fleet.yaml's `tls.fingerprint`: the certificate the node made must be this one. */
  readonly pinned?: string | null;
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
  /** The step its runner died at (issue 36), when the following stopped there. */
  readonly runnerDied?: string;
  /** Whether the node answered the last status read. */
  readonly answered?: boolean;
}

export interface ResumeThroughController {
  readonly client: ControllerClient;
  readonly supervisor: string;
  /** What the transaction's runtime must report (fleet.yaml's, held from the operator's seat). */
  readonly target: RuntimeExpectation;
  readonly acceptanceTimeoutMs: number;
  /** The node's status just read: its transaction open, `next` = `resume-acceptance`. */
  readonly status: RuntimeStatusResponse;
  readonly onProgress?: (line: string) => void;
}

export type ResumedRuntime = Omit<AppliedRuntime, 'staged'>;

/**
 * `fleet upgrade HOST --resume` (issue 36): an interrupted transaction whose new runtime is
 * healthy is closed by a runner of the node (`runtime/activate` with `resume`): acceptance again
 * by the same checks — `accepted` and `end` — or `failed` and the verified rollback. Then the
 * operator accepts from its seat as after an upgrade.
 */
export async function resumeThroughController(
  input: ResumeThroughController,
): Promise<ResumedRuntime> {
  const progress = input.onProgress ?? (() => undefined);
  const txn = input.status.transaction;
  if (txn === null) throw new Error('resume: no transaction in the status');
  const started = await input.client.runtimeActivate({
    operationId: newOperationId(),
    transaction: txn.id,
    acceptanceTimeoutMs: input.acceptanceTimeoutMs,
    resume: true,
  });
  progress(
    `transaction ${txn.id}: resuming at "${txn.lastStep}": runner ${started.runner} on the node (log ${started.log})`,
  );
  const followed = await followTransaction(
    () => input.client.runtimeStatus({ supervisor: input.supervisor }),
    {
      transaction: txn.id,
      timeoutMs: followTimeout(input.acceptanceTimeoutMs),
      onStatus: stepProgress(progress),
      runner: { steps: txn.steps.length },
    },
  );
  return {
    transaction: txn.id,
    runnerLog: started.log,
    ...(followed.runnerDied === undefined ? {} : { runnerDied: followed.runnerDied }),
    answered: followed.answered ?? false,
    verdict: await acceptedFromHere(followed.verdict, {
      client: input.client,
      target: input.target,
      onProgress: progress,
    }),
    status: followed.status,
  };
}

/** Generous: restart, acceptance, and a possible rollback with its own acceptance. */
export function followTimeout(acceptanceTimeoutMs: number): number {
  return acceptanceTimeoutMs * 2 + 180_000;
}

export async function applyThroughController(
  input: ApplyThroughController,
): Promise<AppliedRuntime> {
  const progress = input.onProgress ?? (() => undefined);
  const { staged, uploaded } = await stageRuntime({ ...input, onProgress: progress });
  progress(
    `staged generation ${staged.buildId.slice(0, 12)}${staged.reused ? ' (already present, verified)' : ''}; transaction ${staged.transaction}${staged.tls ? `; certificate ${staged.tls.fingerprint}` : ''}`,
  );
  const refusal = pinnedCertificateRefusal({
    host: input.client.host,
    pinned: input.pinned ?? null,
    actual: staged.tls?.fingerprint,
  });
  if (refusal !== null) {
    await closeStaged(input, staged.transaction, progress);
    throw refusal;
  }
  const started = await input.client.runtimeActivate({
    operationId: newOperationId(),
    transaction: staged.transaction,
    acceptanceTimeoutMs: input.acceptanceTimeoutMs,
  });
  progress(`activating: runner ${started.runner} on the node (log ${started.log})`);
  const followed = await followTransaction(
    () => input.client.runtimeStatus({ supervisor: input.supervisor }),
    {
      transaction: staged.transaction,
      timeoutMs: followTimeout(input.acceptanceTimeoutMs),
      onStatus: stepProgress(progress),
      // begin and staged were journaled before the runner started: a step past them is its.
      runner: { steps: 2 },
    },
  );
  return {
    transaction: staged.transaction,
    staged: { buildId: staged.buildId, reused: staged.reused, uploaded, prior: staged.prior },
    runnerLog: started.log,
    ...(followed.runnerDied === undefined ? {} : { runnerDied: followed.runnerDied }),
    answered: followed.answered ?? false,
    // The runner accepted from the node; the operator accepts from where it connects (issue 35).
    verdict: await acceptedFromHere(followed.verdict, {
      client: input.client,
      target: input.target,
      onProgress: progress,
    }),
    status: followed.status,
  };
}

/** How often a step that has not changed is reported again while waiting (stderr). */
const STILL_EVERY_MS = 10_000;

/**
 * The progress lines of a followed transaction: each new step once, in the journal's order — the
 * steps a poll missed too, by sequence number — each naming its transaction (issue 36 item 5),
 * and — while the node works on one (restarting, accepting) — a line every 10 s saying how long
 * it has waited, so a slow acceptance is not silence (issue 35 item 3).
 */
export function stepProgress(
  progress: (line: string) => void,
  now: () => number = Date.now,
): (status: RuntimeStatusResponse) => void {
  let lastKey = '';
  let lastSeq = 0;
  let lastStep = '';
  let since = now();
  let said = since;
  return (status) => {
    const txn = status.transaction;
    const step = txn?.steps.at(-1);
    if (!txn || !step) return;
    if (txn.id !== lastKey) {
      lastKey = txn.id;
      lastSeq = 0;
    }
    const fresh = txn.steps.filter((s) => s.seq > lastSeq);
    if (fresh.length > 0) {
      for (const s of fresh) progress(`transaction ${txn.id}: ${s.step}: ${s.detail}`);
      lastSeq = step.seq;
      lastStep = step.step;
      since = now();
      said = since;
    } else if (now() - said >= STILL_EVERY_MS) {
      said = now();
      progress(
        `transaction ${txn.id}: still after ${lastStep}: waited ${Math.round((said - since) / 1000)} s`,
      );
    }
  };
}

/**
 * Closes a staged transaction the operator refuses to activate (a certificate that is not the
 * pinned one): the rollback route closes a transaction open at `staged` as `failed`, nothing
 * activated. When that is refused (an upgrade token without `node-admin:bootstrap`) the refusal
 * still stands; the transaction is left for `fleet bootstrap rollback`, and the line says so.
 */
async function closeStaged(
  input: ApplyThroughController,
  transaction: string,
  progress: (line: string) => void,
): Promise<void> {
  try {
    await input.client.runtimeRollback({
      operationId: newOperationId(),
      acceptanceTimeoutMs: input.acceptanceTimeoutMs,
    });
    const closed = await followTransaction(
      () => input.client.runtimeStatus({ supervisor: input.supervisor }),
      { transaction, timeoutMs: 30_000 },
    );
    progress(
      closed.verdict.done
        ? `transaction ${transaction} closed, nothing activated`
        : `transaction ${transaction} is being closed on the node (nothing activated)`,
    );
  } catch (error) {
    progress(
      `transaction ${transaction} stays open at "staged" (${asFleetError(error).code}): close it with \`fleet bootstrap rollback ${input.client.host} --confirm\`; nothing was activated`,
    );
  }
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
 * Whether a stage should be sent again without `listen`: a node that predates the field refuses
 * the key (`BAD_REQUEST` naming it, contract §5.2: objects are strict). Staged without it, the
 * node keeps its installed unit's flags, as before issue 35.
 */
export function withoutListen(error: { readonly code: string; readonly message: string }): boolean {
  return error.code === 'BAD_REQUEST' && /\blisten\b/.test(error.message);
}

/**
 * Whether a stage should be sent again without `artifact.signature`: a node that predates
 * release signatures refuses the key (`BAD_REQUEST` naming it); it verifies none either.
 */
export function withoutSignature(error: {
  readonly code: string;
  readonly message: string;
}): boolean {
  return error.code === 'BAD_REQUEST' && error.message.includes('artifact.signature');
}

/**
 * The stage (contract §12): without the artifact's bytes when the node lists its generation
 * (`input.held`, or the status it is asked for now), else — or when the node cannot stage it
 * without them — with.
 */
export async function stageRuntime(
  input: Omit<ApplyThroughController, 'acceptanceTimeoutMs'>,
): Promise<{ staged: RuntimeStageResponse; uploaded: boolean }> {
  const progress = input.onProgress ?? (() => undefined);
  const held =
    input.held ?? (await input.client.runtimeStatus({ supervisor: input.supervisor })).generations;
  const { identity, bytes } = input.artifact;
  let listen = input.listen;
  let signature = input.artifact.signature;
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
      ...(signature === undefined ? {} : { signature }),
    },
    ...(listen === undefined ? {} : { listen }),
  });
  const stage = async (content: string | undefined): Promise<RuntimeStageResponse> => {
    try {
      return await input.client.runtimeStage(request(content));
    } catch (error) {
      if (signature !== undefined && withoutSignature(asFleetError(error))) {
        progress('the node predates release signatures: staged without the signature');
        signature = undefined;
        return stage(content);
      }
      if (listen === undefined || !withoutListen(asFleetError(error))) throw error;
      progress(
        "the node predates the stage's listen: staged without it, the controller keeps its unit's --bind/--port/TLS flags",
      );
      listen = undefined;
      return input.client.runtimeStage(request(content));
    }
  };
  if (held.includes(identity.sha256)) {
    progress(`the node holds generation ${identity.sha256.slice(0, 12)}: staging it, no upload`);
    try {
      return { staged: await stage(undefined), uploaded: false };
    } catch (error) {
      const failure = asFleetError(error);
      if (!uploadInstead(failure)) throw error;
      progress(`the node cannot stage it without the artifact (${failure.code}): uploading`);
    }
  }
  progress(`uploading ${identity.file} (${bytes.length} bytes)`);
  const staged = await stage(bytes.toString('base64'));
  return { staged, uploaded: true };
}
