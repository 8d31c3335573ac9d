/**
 * `POST /v1/snapshot`: the config verbs' one read per host (contract §14: one request per host per
 * verb). Every requested managed file, redacted, with the redacted contents of the backups the
 * node holds of it — the node's share of the published versions (contract §8.2). A file that cannot be
 * read safely is reported refused with its code; the others are still answered.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import {
  homePathSchema,
  jsonObjectSchema,
  jsonValueSchema,
  observedModeSchema,
  operationIdSchema,
  sha256Schema,
  timestampSchema,
} from './protocol.js';
import { runtimeSummarySchema } from './summary.js';

/** Files one snapshot may ask for: every managed file of a host fits with room to spare. */
export const MAX_SNAPSHOT_PATHS = 64;
/** Probers one snapshot may run: every domain prober of a host, with room to spare. */
export const MAX_SNAPSHOT_PROBES = 32;

/** A prober to run in the same request (drift stays one request per host, contract §14). */
export const snapshotProbeSchema = z.lazy(() =>
  z.strictObject({
    prober: z.string().min(1).max(200),
    /** The domain of a domain's prober: a node that lacks it answers `DOMAIN_NOT_SERVED`. */
    domain: z.string().min(1).max(200).optional(),
    parameters: jsonObjectSchema,
  }),
);

/**
 * One file to read, with the domain it is a file of: the node answers `DOMAIN_NOT_SERVED` for a
 * domain it does not serve and `POLICY_REFUSED` for a path its policy does not accept for it.
 */
export const snapshotFileRequestSchema = z.lazy(() =>
  z.strictObject({
    domain: z.string().min(1).max(200),
    path: homePathSchema,
    /**
     * Answer the file's mode too (a files entry with a `mode`, contract §10.4). Sent only for such a
     * file: a node that predates the field refuses it (strict objects) rather than answer without.
     */
    mode: z.literal(true).optional(),
    /**
     * Answer a file that is not UTF-8 text by its sha256 (`binary: true`) rather than refuse it: a
     * files entry whose source is bytes is compared by bytes (contract §10.4). Sent only for such
     * a file: a node that predates the field refuses it (strict objects).
     */
    bytes: z.literal(true).optional(),
  }),
);

export const snapshotRequestSchema = z.lazy(() =>
  z.strictObject({
    files: z.array(snapshotFileRequestSchema).min(1).max(MAX_SNAPSHOT_PATHS),
    /** Include each file's backups (newest first). */
    backups: z.boolean(),
    /** Probers to run, answered in `probes` (each collects read-only facts, redacted). */
    probes: z.array(snapshotProbeSchema).max(MAX_SNAPSHOT_PROBES).optional(),
    /**
     * Answer the runtime journal summary too (`GET /v1/summary`'s `runtime`): drift's word on an
     * open or failed runtime transaction, in its one request per host (contract §14). A node that
     * predates the field refuses the request (strict objects); the operator then asks
     * `/v1/summary` apart.
     */
    runtime: z.literal(true).optional(),
  }),
);

/** One prober's answer: its facts, or why it could not run (the other answers still stand). */
export const snapshotProbeResultSchema = z.lazy(() =>
  z.discriminatedUnion('state', [
    z.strictObject({
      prober: z.string(),
      state: z.literal('ok'),
      layer: z.enum(['file', 'derived', 'runtime', 'version']),
      facts: jsonValueSchema,
      collectedAt: timestampSchema,
    }),
    z.strictObject({
      prober: z.string(),
      state: z.literal('error'),
      code: z.string(),
      message: z.string(),
    }),
  ]),
);

/** Contents the node remembers writing per path at most (the newest; docs/classification.md). */
export const MAX_WRITES_PER_PATH = 32;

/**
 * One content fleet's writer renamed into place at a path: the sha256 of the bytes written (the
 * live file's `sha256` equals it while nobody changed the file), when, and by which operation.
 */
export const snapshotWriteSchema = z.lazy(() =>
  z.strictObject({
    sha256: sha256Schema,
    at: timestampSchema,
    operationId: operationIdSchema,
    /**
     * The permission bits it was written with (contract §10.4): a live mode other than this one is
     * a hand change. Absent on Windows and in writes recorded before modes were.
     */
    mode: observedModeSchema.optional(),
  }),
);

/**
 * The node's record of a path, newest first. Absent from a controller that keeps no record (an
 * older node): the operator then knows the main line's versions only and cannot tell `deleted`.
 */
const writesSchema = z.lazy(() => z.array(snapshotWriteSchema).max(MAX_WRITES_PER_PATH).optional());

const snapshotBackupSchema = z.lazy(() =>
  z.strictObject({
    path: z.string(),
    sha256: sha256Schema,
    content: z.string(),
  }),
);

export const snapshotFileSchema = z.lazy(() =>
  z.discriminatedUnion('state', [
    z.strictObject({
      path: z.string(),
      state: z.literal('present'),
      size: z.number().int().nonnegative(),
      mtime: timestampSchema,
      sha256: sha256Schema,
      content: z.string(),
      redacted: z.boolean(),
      backups: z.array(snapshotBackupSchema),
      writes: writesSchema,
      /**
       * The file is not UTF-8 text (asked with `bytes: true`): `content` is empty and the file is
       * compared by `sha256` and `size` — its bytes never leave the node (none of it is redacted).
       */
      binary: z.literal(true).optional(),
      /** The live permission bits, when the request asked (`mode: true`) and the node has them. */
      mode: observedModeSchema.optional(),
      /**
       * The secret names whose live value is an earlier one (rotated since it was written: the node's
       * secret memory knows it), names only — never a value (contract §15). Absent when none.
       */
      rotatedSecrets: z
        .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/))
        .max(256)
        .optional(),
    }),
    z.strictObject({
      path: z.string(),
      state: z.literal('absent'),
      backups: z.array(snapshotBackupSchema),
      writes: writesSchema,
    }),
    z.strictObject({
      path: z.string(),
      state: z.literal('refused'),
      code: z.string(),
      message: z.string(),
    }),
  ]),
);

export const snapshotResponseSchema = z.lazy(() =>
  z.strictObject({
    nodeId: z.string(),
    files: z.array(snapshotFileSchema),
    /** True when the backups of some file were cut at the response bound. */
    truncated: z.boolean(),
    /** The answers of the requested probers, in request order (absent when none were asked). */
    probes: z.array(snapshotProbeResultSchema).optional(),
    /** The runtime journal summary, when the request asked (`runtime: true`). */
    runtime: runtimeSummarySchema.optional(),
  }),
);

export type SnapshotRequest = z.infer<typeof snapshotRequestSchema>;
export type SnapshotFileRequest = z.infer<typeof snapshotFileRequestSchema>;
export type SnapshotProbe = z.infer<typeof snapshotProbeSchema>;
export type SnapshotProbeResult = z.infer<typeof snapshotProbeResultSchema>;
export type SnapshotResponse = z.infer<typeof snapshotResponseSchema>;
export type SnapshotFile = z.infer<typeof snapshotFileSchema>;
export type SnapshotWrite = z.infer<typeof snapshotWriteSchema>;
