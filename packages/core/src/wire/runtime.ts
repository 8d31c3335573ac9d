/**
 * The runtime lifecycle on the wire (contract §5 "runtime stage/activate/status/rollback", §11, §12):
 *
 * - `POST /v1/runtime/stage`    the artifact's bytes (base64), its sha256 checked again on the node
 *                               after transfer — or no bytes, for a generation the node already
 *                               holds, verified again from its own disk; the node opens a journal
 *                               transaction (`begin`) and stages an immutable generation (`staged`).
 * - `POST /v1/runtime/activate` the node hands the open transaction to a detached runner (it
 *                               restarts the controller that answers): flip, supervisor definition,
 *                               restart, acceptance — or a verified rollback.
 * - `POST /v1/runtime/status`   the journal reconciled with observation (pointer, supervisor, live
 *                               identity): never journal intent as liveness.
 * - `POST /v1/runtime/rollback` back to the prior generation (or finishing an interrupted
 *                               transaction by rolling it back), again by a detached runner.
 *
 * Upgrades need `runtime:upgrade`; bootstrap and its reads need `node-admin:bootstrap`.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { operationIdSchema, sha256Schema, timestampSchema } from './protocol.js';
import { pinnedPluginSchema } from '../schemas/runtime-plugins.js';
import { controllerListenSchema } from '../schemas/controller-listen.js';

/** The largest artifact one stage request carries (a bundled runtime is ~10 MiB). */
export const MAX_ARTIFACT_BYTES = 128 * 1024 * 1024;
/** base64 of {@link MAX_ARTIFACT_BYTES} plus room for the envelope. */
export const MAX_STAGE_BODY_BYTES = Math.ceil(MAX_ARTIFACT_BYTES / 3) * 4 + 64 * 1024;

/** Acceptance timeout bounds (ms): long enough for a cold start, short enough to end. */
export const ACCEPTANCE_TIMEOUT_MS = { min: 1_000, default: 60_000, max: 600_000 } as const;

const name = z.lazy(() => z.string().min(1).max(200));

/**
 * What a started runtime must report to be accepted (contract §12): the exact node id (and its
 * `--node-id`), package and build identity, a protocol within range, every expected catalog entry
 * and health `ok`. A matching version alone never accepts.
 */
export const runtimeExpectationSchema = z.lazy(() =>
  z.strictObject({
    nodeId: z.string().min(1),
    package: z.string().min(1),
    /** Checked when given; never sufficient on its own. */
    version: z.string().nullable(),
    build: z.strictObject({
      sha256: sha256Schema,
      /** Exact: `null` only matches a runtime that reports no commit. */
      commit: z.string().nullable(),
    }),
    /** The protocol versions the operator speaks: the runtime's must be within. */
    protocol: z.strictObject({
      min: z.number().int().positive(),
      max: z.number().int().positive(),
    }),
    /** Every entry must be present (more is fine). */
    catalog: z.strictObject({
      domains: z.array(z.string()),
      probers: z.array(z.string()),
      bootstrapAdapters: z.array(z.string()),
      /**
       * The plugins fleet.yaml names (contract §10.5): each must be in the runtime's catalog with
       * this version and sha256. Absent when fleet.yaml names none.
       */
      plugins: z.array(pinnedPluginSchema).optional(),
    }),
  }),
);
export type RuntimeExpectation = z.infer<typeof runtimeExpectationSchema>;

export const RUNTIME_TRANSACTION_KINDS = ['upgrade', 'bootstrap', 'rollback'] as const;
export type RuntimeTransactionKind = (typeof RUNTIME_TRANSACTION_KINDS)[number];

export const runtimeStageRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    kind: z.enum(['upgrade', 'bootstrap']),
    /** The supervisor the host is recorded with (fleet.yaml `supervisor`). */
    supervisor: name,
    /** The bootstrap plan's id (bootstrap only): journaled, so status names the plan it applied. */
    planId: sha256Schema.nullable(),
    /** What the new runtime must report; `target.build.sha256` is the artifact's sha256. */
    target: runtimeExpectationSchema,
    artifact: z.strictObject({
      sha256: sha256Schema,
      bytes: z.number().int().positive().max(MAX_ARTIFACT_BYTES),
      /**
       * The tarball, base64. Absent: stage from the generation `generations/<sha256>/` the node
       * already holds (its status lists it), which the node verifies again — tree hash, recorded
       * artifact sha256 — and refuses with `GENERATION_NOT_HELD` when it is missing or does not
       * verify; the operator then uploads (contract §12). A node that predates this answers
       * `BAD_REQUEST` naming `artifact.content`.
       */
      content: z.base64().optional(),
      /**
       * The release signature (ADR 0019): the one-line base64 body of `ssh-keygen -Y sign -n
       * fleet-release` over the tarball's exact bytes (`signatureBody`). The node verifies it
       * against its policy's `runtime.trustedKeys` — over the uploaded bytes, or the held
       * generation's `artifact.tgz` — before anything is journaled. A node that predates it
       * answers `BAD_REQUEST` naming `artifact.signature`.
       */
      signature: z
        .base64()
        .max(16 * 1024)
        .optional(),
    }),
    /**
     * Where the new controller listens (fleet.yaml's `controller` URL, `controllerListen`): the
     * runner installs these flags, and with `tls` the node makes (or keeps) its certificate at
     * stage and answers its fingerprint. Absent: the flags of the unit installed now are carried
     * over. A node that predates it answers `BAD_REQUEST` naming `listen`; the operator then
     * stages without it (contract §12).
     */
    listen: controllerListenSchema.optional(),
  }),
);
export type RuntimeStageRequest = z.infer<typeof runtimeStageRequestSchema>;

export const runtimeStageResponseSchema = z.lazy(() =>
  z.strictObject({
    transaction: z.string(),
    buildId: sha256Schema,
    treeHash: sha256Schema,
    /** An identical generation was already staged (verified, not rewritten). */
    reused: z.boolean(),
    /** The build the node runs now (the rollback target), `null` when it runs no generation. */
    prior: sha256Schema.nullable(),
    /**
     * The certificate the new controller will serve (a `listen` with `tls`): its fingerprint in
     * fleet.yaml's `tls.fingerprint` form, which the operator holds against the pin before it
     * activates anything.
     */
    tls: z.strictObject({ fingerprint: z.string() }).optional(),
  }),
);
export type RuntimeStageResponse = z.infer<typeof runtimeStageResponseSchema>;

const acceptanceTimeoutSchema = z.lazy(() =>
  z.number().int().min(ACCEPTANCE_TIMEOUT_MS.min).max(ACCEPTANCE_TIMEOUT_MS.max),
);

export const runtimeActivateRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    transaction: z.string().min(1).max(64),
    acceptanceTimeoutMs: acceptanceTimeoutSchema.optional(),
    /**
     * Resume an interrupted transaction (issue 36, `fleet upgrade HOST --resume`): open past
     * `activated`, no runner alive, and its status recommending `resume-acceptance` — a runner
     * accepts the live runtime again and journals `accepted` and `end`, or fails it and rolls
     * back. Absent: the transaction must be open at `staged`. A node that predates it answers
     * `BAD_REQUEST` naming `resume`.
     */
    resume: z.boolean().optional(),
  }),
);
export type RuntimeActivateRequest = z.infer<typeof runtimeActivateRequestSchema>;

export const runtimeRollbackRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    acceptanceTimeoutMs: acceptanceTimeoutSchema.optional(),
  }),
);
export type RuntimeRollbackRequest = z.infer<typeof runtimeRollbackRequestSchema>;

/** The answer of activate and rollback: the runner took the transaction over. */
export const runtimeStartedResponseSchema = z.lazy(() =>
  z.strictObject({
    transaction: z.string(),
    /** The pid of the detached runner (it restarts this controller). */
    runner: z.number().int().positive(),
    log: z.string(),
  }),
);
export type RuntimeStartedResponse = z.infer<typeof runtimeStartedResponseSchema>;

export const RUNTIME_STATES = [
  'idle',
  'in-progress',
  'accepted',
  'rolled-back',
  'manual-recovery-required',
  'inconsistent',
] as const;
export type RuntimeStateName = (typeof RUNTIME_STATES)[number];

export const runtimeStatusRequestSchema = z.lazy(() =>
  z.strictObject({
    /** The host's recorded supervisor, observed when the journal names none. */
    supervisor: name.optional(),
  }),
);
export type RuntimeStatusRequest = z.infer<typeof runtimeStatusRequestSchema>;

const shortRecord = z.lazy(() =>
  z.strictObject({
    seq: z.number().int().positive(),
    at: z.string(),
    step: z.string(),
    detail: z.string(),
  }),
);

export const runtimeStatusResponseSchema = z.lazy(() =>
  z.strictObject({
    state: z.enum(RUNTIME_STATES),
    journal: z.enum(['empty', 'ok', 'torn-tail', 'corrupt']),
    transaction: z
      .strictObject({
        id: z.string(),
        kind: z.enum(RUNTIME_TRANSACTION_KINDS),
        target: sha256Schema,
        prior: sha256Schema.nullable(),
        lastStep: z.string(),
        outcome: z.string().nullable(),
        planId: sha256Schema.nullable(),
        /** The last transaction's records, one line each (evidence for the operator). */
        steps: z.array(shortRecord),
      })
      .nullable(),
    observed: z.strictObject({
      pointer: sha256Schema.nullable(),
      supervisor: sha256Schema.nullable(),
      live: sha256Schema.nullable(),
      supervisorState: z.string().nullable(),
    }),
    next: z.enum(['none', 'wait', 'abort', 'resume-acceptance', 'rollback', 'operator']),
    problems: z.array(z.string()),
    code: z.enum(['RECOVERY_REQUIRED']).nullable(),
    /** Generations kept on the node (build ids), newest stage first. */
    generations: z.array(sha256Schema),
    /** A runner works on the open transaction now (its pid). */
    busy: z.number().int().positive().nullable(),
    observedAt: timestampSchema,
  }),
);
export type RuntimeStatusResponse = z.infer<typeof runtimeStatusResponseSchema>;
