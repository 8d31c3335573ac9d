/**
 * The install receipt, `fleet.receipt/v1` (contract §8.4): what the node did for one operation id,
 * per file and per coupled action. Diffs are redacted on the node; paths are `~/`-relative.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import {
  commitIdSchema,
  fileModeSchema,
  observedModeSchema,
  operationIdSchema,
  sha256Schema,
  timestampSchema,
} from './protocol.js';

/**
 * A file's mode before and after an install that named one (contract §10.4); `before` is `null`
 * for a file the install created. Absent when the request named no mode.
 */
export const fileModeChangeSchema = z.lazy(() =>
  z.strictObject({
    before: observedModeSchema.nullable(),
    after: fileModeSchema,
  }),
);

export const RECEIPT_SCHEMA = 'fleet.receipt/v1';

export const receiptFileSchema = z.lazy(() =>
  z.strictObject({
    path: z.string(),
    /** The domain's id for the file (`router.yaml`, `volume`). */
    fileId: z.string(),
    beforeSha256: sha256Schema.nullable(),
    afterSha256: sha256Schema,
    /** `~/`-relative backup of the replaced content; `null` when nothing was replaced. */
    backupPath: z.string().nullable(),
    /** Redacted unified diff, before → after (empty when unchanged). */
    diff: z.string(),
    /** `written`; `unchanged` (nothing written); `restored` (written, then put back). */
    state: z.enum(['written', 'unchanged', 'restored']),
    /**
     * `true` when the replaced file had other hard links (catalogue 16): the rename put a new inode
     * in place, so the other names kept the old content. Absent otherwise.
     */
    hardlinkBroken: z.literal(true).optional(),
    mode: fileModeChangeSchema.optional(),
  }),
);

export const receiptActionSchema = z.lazy(() =>
  z.strictObject({
    kind: z.string(),
    /** `pending`: settled by the restarted controller after the answer (poll the operation's status). */
    status: z.enum(['ok', 'skipped', 'failed', 'rolled-back', 'pending']),
    detail: z.string(),
  }),
);

export const receiptSchema = z.strictObject({
  schema: z.literal(RECEIPT_SCHEMA),
  operationId: operationIdSchema,
  /** The node id that did the work. */
  host: z.string(),
  domain: z.string(),
  /**
   * `installed`: the new content is live and verified; `unchanged`: every file already equalled
   * it; `rolled-back`: a step after a write failed and every written file was restored (`error`
   * says why).
   */
  outcome: z.enum(['installed', 'unchanged', 'rolled-back']),
  files: z.array(receiptFileSchema),
  actions: z.array(receiptActionSchema),
  verified: z.boolean(),
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  finishedAt: timestampSchema,
  /**
   * The fleet repository commit the install request named (contract §8.4): what this content was
   * rendered from. Present exactly when the request carried `repoCommit`, so an operator that
   * predates the field (and never sends it) never gets a key its strict schema refuses.
   */
  repoCommit: commitIdSchema.nullable().optional(),
  /** The node's audit record for this operation: its sequence number and line sha256. */
  audit: z.strictObject({ seq: z.number().int().nonnegative(), sha256: sha256Schema }),
});

export type Receipt = z.infer<typeof receiptSchema>;
export type ReceiptFile = z.infer<typeof receiptFileSchema>;
