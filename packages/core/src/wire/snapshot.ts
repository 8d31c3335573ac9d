/**
 * `POST /v1/snapshot`: the config verbs' one read per host (SPEC §14: one request per host per
 * verb). Every requested managed file, redacted, with the redacted contents of the backups the
 * node holds of it — the node's share of the published versions (SPEC §8.2). A file that cannot be
 * read safely is reported refused with its code; the others are still answered.
 */
import { z } from 'zod';
import { homePathSchema, sha256Schema, timestampSchema } from './protocol.js';

/** Files one snapshot may ask for: every managed file of a host fits with room to spare. */
export const MAX_SNAPSHOT_PATHS = 64;

export const snapshotRequestSchema = z.strictObject({
  paths: z.array(homePathSchema).min(1).max(MAX_SNAPSHOT_PATHS),
  /** Include each file's backups (newest first). */
  backups: z.boolean(),
});

const snapshotBackupSchema = z.strictObject({
  path: z.string(),
  sha256: sha256Schema,
  content: z.string(),
});

export const snapshotFileSchema = z.discriminatedUnion('state', [
  z.strictObject({
    path: z.string(),
    state: z.literal('present'),
    size: z.number().int().nonnegative(),
    mtime: timestampSchema,
    sha256: sha256Schema,
    content: z.string(),
    redacted: z.boolean(),
    backups: z.array(snapshotBackupSchema),
  }),
  z.strictObject({ path: z.string(), state: z.literal('absent'), backups: z.array(snapshotBackupSchema) }),
  z.strictObject({ path: z.string(), state: z.literal('refused'), code: z.string(), message: z.string() }),
]);

export const snapshotResponseSchema = z.strictObject({
  nodeId: z.string(),
  files: z.array(snapshotFileSchema),
  /** True when the backups of some file were cut at the response bound. */
  truncated: z.boolean(),
});

export type SnapshotRequest = z.infer<typeof snapshotRequestSchema>;
export type SnapshotResponse = z.infer<typeof snapshotResponseSchema>;
export type SnapshotFile = z.infer<typeof snapshotFileSchema>;
