/**
 * `GET /v1/summary` (contract §5, §7 `fleet status`): the one read per host of `fleet status` —
 * who the node is and what runtime it runs (as `/v1/identity`, without the catalog), its health,
 * and a small read-only summary of the runtime journal: whether a transaction is in progress or
 * needs recovery. It carries no journal detail, runner log or supervisor observation (those stay
 * `fleet bootstrap status`, `node-admin:bootstrap` or `runtime:upgrade`), so the everyday reading
 * scopes open it: `config:read`, `versions:read` (and the runtime scopes); the legacy token too.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { sha256Schema, timestampSchema } from './protocol.js';

export const runtimeAttentionSchema = z.lazy(() =>
  z.enum(['none', 'in-progress', 'recovery-required']),
);

export const runtimeSummarySchema = z.lazy(() =>
  z.strictObject({
    journal: z.enum(['empty', 'ok', 'torn-tail', 'corrupt']),
    /** A live process holds the runtime lock (a transaction is being worked on now). */
    busy: z.boolean(),
    /**
     * `in-progress`: a transaction is open and being worked on (or staged, awaiting activation);
     * `recovery-required`: the journal is corrupt, a transaction ended in manual recovery, or an
     * activated transaction is open with nobody working on it.
     */
    attention: runtimeAttentionSchema,
    transaction: z
      .strictObject({
        id: z.string().min(1).max(64),
        kind: z.enum(['upgrade', 'bootstrap', 'rollback']),
        lastStep: z.string().min(1),
        /** When its last step was journaled. */
        at: timestampSchema,
        outcome: z
          .enum(['accepted', 'rolled-back', 'manual-recovery-required', 'failed'])
          .nullable(),
      })
      .nullable(),
  }),
);

export const nodeSummaryResponseSchema = z.lazy(() =>
  z.strictObject({
    nodeId: z.string(),
    package: z.string(),
    version: z.string(),
    build: z.strictObject({ sha256: sha256Schema.nullable(), commit: z.string().nullable() }),
    protocol: z.number().int().positive(),
    startedAt: timestampSchema,
    health: z.enum(['ok', 'degraded']),
    runtime: runtimeSummarySchema,
  }),
);

export type RuntimeAttention = z.infer<typeof runtimeAttentionSchema>;
export type RuntimeSummary = z.infer<typeof runtimeSummarySchema>;
export type NodeSummaryResponse = z.infer<typeof nodeSummaryResponseSchema>;
