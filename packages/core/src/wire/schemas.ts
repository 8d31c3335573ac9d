/**
 * zod schemas of every request and response body of the controller API (contract §5, §8.4, §9).
 * Every object is strict: an unknown field is a schema violation (`BAD_REQUEST`), on both sides.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import {
  commitIdSchema,
  errorBodySchema,
  fileFormatSchema,
  fileModeSchema,
  homePathSchema,
  jsonObjectSchema,
  jsonValueSchema,
  operationIdSchema,
  sha256Schema,
  timestampSchema,
} from './protocol.js';
import { receiptSchema } from './receipt.js';
import { actionIdSchema } from '../schemas/node-policy.js';
import { pinnedPluginSchema } from '../schemas/runtime-plugins.js';

const name = z.lazy(() => z.string().min(1).max(200));

// ---- identity and health ----------------------------------------------------------------------

export const healthSchema = z.lazy(() =>
  z.strictObject({
    status: z.enum(['ok', 'degraded']),
    checks: z.array(
      z.strictObject({ name, status: z.enum(['ok', 'failing']), detail: z.string() }),
    ),
  }),
);

/** A plugin the node loaded from its generation: its verified pin and the domains it serves. */
export const carriedPluginSchema = pinnedPluginSchema.extend({ domains: z.array(name) });

export const catalogSchema = z.lazy(() =>
  z.strictObject({
    domains: z.array(
      z.strictObject({
        domain: name,
        plugin: name,
        version: name,
        coupling: z.enum(['none', 'process']),
        implemented: z.boolean(),
      }),
    ),
    probers: z.array(
      z.strictObject({
        id: name,
        layer: z.enum(['file', 'derived', 'runtime', 'version']),
        domain: name.nullable(),
        plugin: name,
        version: name,
        implemented: z.boolean(),
      }),
    ),
    bootstrapAdapters: z.array(
      z.strictObject({
        supervisor: name,
        platforms: z.array(z.enum(['linux', 'darwin', 'win32'])),
        plugin: name,
        version: name,
        implemented: z.boolean(),
      }),
    ),
    /**
     * The third-party plugins the running generation carries and the node loaded (contract §10.5),
     * each with its pin and the domains it registered; bundled plugins are not listed. Absent from a
     * runtime that predates plugins in fleet.yaml.
     */
    plugins: z.array(carriedPluginSchema).optional(),
  }),
);

/** `GET /v1/identity`: the exact shape of contract §5. */
export const identityResponseSchema = z.lazy(() =>
  z.strictObject({
    nodeId: name,
    nodeIdFlag: name,
    package: name,
    version: name,
    build: z.strictObject({ sha256: sha256Schema.nullable(), commit: z.string().nullable() }),
    protocol: z.number().int().positive(),
    catalog: catalogSchema,
    pid: z.number().int().positive(),
    startedAt: timestampSchema,
    health: healthSchema,
  }),
);

export const healthResponseSchema = healthSchema;

// ---- inventory and export ---------------------------------------------------------------------

const fileError = z.lazy(() => z.strictObject({ code: z.string(), message: z.string() }));

export const inventoryFileSchema = z.lazy(() =>
  z.strictObject({
    domain: name,
    fileId: name,
    path: z.string(),
    kind: z.enum(['file', 'derived']),
    format: fileFormatSchema,
    exists: z.boolean(),
    size: z.number().int().nonnegative().optional(),
    mtime: timestampSchema.optional(),
    sha256: sha256Schema.optional(),
    /** Why the file could not be read (a symlink, binary content, over the size bound…). */
    error: fileError.optional(),
  }),
);

export const inventoryBackupSchema = z.lazy(() =>
  z.strictObject({
    domain: name,
    fileId: name,
    /** The managed path the backup is a copy of. */
    of: z.string(),
    /** The backup's own `~/` path (exportable). */
    path: z.string(),
    size: z.number().int().nonnegative(),
    mtime: timestampSchema,
    sha256: sha256Schema,
  }),
);

export const inventoryResponseSchema = z.lazy(() =>
  z.strictObject({
    nodeId: name,
    generatedAt: timestampSchema,
    files: z.array(inventoryFileSchema),
    backups: z.array(inventoryBackupSchema),
    /** True when the backup listing was cut at its bound. */
    truncated: z.boolean(),
  }),
);

export const exportRequestSchema = z.lazy(() => z.strictObject({ path: homePathSchema }));

const exportedCommon = {
  path: z.string(),
  domain: name,
  fileId: name,
  kind: z.enum(['file', 'derived', 'backup']),
  format: fileFormatSchema,
};

export const exportResponseSchema = z.lazy(() =>
  z.discriminatedUnion('exists', [
    z.strictObject({
      ...exportedCommon,
      exists: z.literal(true),
      size: z.number().int().nonnegative(),
      mtime: timestampSchema,
      /** sha256 of the live bytes (what an install's `expectedSha256` is compared with). */
      sha256: sha256Schema,
      /** The content with every secret value of the node's env chain back to its placeholder. */
      content: z.string(),
      /** True when at least one secret value was replaced. */
      redacted: z.boolean(),
    }),
    z.strictObject({ ...exportedCommon, exists: z.literal(false) }),
  ]),
);

// ---- install ----------------------------------------------------------------------------------

/** Padded base64 (RFC 4648 §4), as `Buffer.toString('base64')` writes it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const installFileRequestSchema = z.lazy(() =>
  z
    .strictObject({
      fileId: name,
      path: homePathSchema,
      expectedSha256: sha256Schema.nullable(),
      /** Desired content in template space: `{{ secret.NAME }}` placeholders are resolved on the node. */
      content: z.string(),
      /** A repository-declared block file's markers (contract §10.4); absent for every other file. */
      markers: z
        .strictObject({ begin: z.string().min(1).max(200), end: z.string().min(1).max(200) })
        .optional(),
      /**
       * The mode the file is written with (contract §10.4: a files entry's `mode`); absent: a replaced
       * file keeps its mode, a new one is 0600. An optional addition within protocol 2: a node that
       * predates it refuses the field (strict objects), it never ignores it.
       */
      mode: fileModeSchema.optional(),
      /**
       * The node policy action run after this file is written, when it changed (contract §10.4, §5.1:
       * `domains.<domain>.actions.<id>`; an id the policy lacks is `POLICY_REFUSED` before any write).
       */
      action: actionIdSchema.optional(),
      /**
       * `false`: a files entry that is not a template (contract §10.4): the node writes `content` as
       * it is and resolves no secret in it. Sent only for such an entry; a node that predates the
       * field refuses it (strict objects) rather than resolve the text as a template.
       */
      template: z.literal(false).optional(),
      /**
       * `base64`: a whole files entry whose source is not UTF-8 text (contract §10.4): `content` is
       * its bytes in base64 (RFC 4648, padded), written byte for byte — never rendered, no secret
       * resolved. A node that predates the field refuses it (strict objects, `BAD_REQUEST` naming
       * `encoding`): it never writes the base64 text, nor a re-encoding of the bytes.
       */
      encoding: z.literal('base64').optional(),
    })
    .superRefine((file, ctx) => {
      if (file.encoding === 'base64' && !BASE64.test(file.content)) {
        ctx.addIssue({
          code: 'custom',
          path: ['content'],
          message: 'must be base64 (RFC 4648, padded) with `encoding: base64`',
        });
      }
    }),
);

/** A role a domain gives an action (the router's `reload`), or a file id of a repo-defined domain. */
export const actionRoleSchema = z.lazy(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'must be an action role (letters, digits, . _ -)'),
);

/**
 * `POST /v1/install`: the wire form of core's `NodeInstallRequest`. Coupled actions are named by
 * the ids of the node policy's actions (`actions: { reload: "router-reload" }`), never by an argv:
 * what runs is the node's decision (contract §5.1).
 */
export const installRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    domain: name,
    files: z.array(installFileRequestSchema).min(1).max(64),
    parameters: z.record(z.string(), z.string()),
    actions: z.record(actionRoleSchema, actionIdSchema).optional(),
    /** Sent by a scheduled `fleet harness reconcile --unattended` (contract §10.3): marked in the audit. */
    unattended: z.boolean().optional(),
    /**
     * The fleet repository commit the files' content was rendered from (contract §1.8, §8.4): the
     * node writes it into the receipt and the operation's audit record; `null`: the sender read
     * no commit. An optional addition within protocol 2: a node that predates it refuses the key
     * (`BAD_REQUEST` naming `repoCommit`, before the operation id is claimed), and the operator
     * sends the same request again without it (`installThrough`, client/install.ts).
     */
    repoCommit: commitIdSchema.nullable().optional(),
    /**
     * The sender shows a refused action's output: an `ACTION_FAILED` answer with no receipt may
     * then carry `error.toolOutput` (contract §5.2: an answer's new field only for a request that
     * names it). An optional addition within protocol 2, dropped like `repoCommit` when a node
     * that predates it refuses the key (`installThrough`); the answer then has no tail.
     */
    toolOutput: z.literal(true).optional(),
  }),
);

export const installResponseSchema = receiptSchema;

// ---- capture (adopt) and probe ------------------------------------------------------------------

export const captureRequestSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    path: homePathSchema,
  }),
);

/** The wire form of core's `Capture` (redacted on the node), plus when it was taken. */
export const captureResponseSchema = z.lazy(() =>
  z.strictObject({
    operationId: operationIdSchema,
    host: name,
    domain: name,
    fileId: name,
    path: z.string(),
    sha256: sha256Schema,
    content: z.string(),
    redacted: z.boolean(),
    /** The controller's build identity (`@fleet/controller@0.1.0+<sha256|dev>`). */
    controller: z.string(),
    capturedAt: timestampSchema,
  }),
);

export const probeRequestSchema = z.lazy(() =>
  z.strictObject({
    prober: name,
    parameters: jsonObjectSchema,
  }),
);

export const probeResponseSchema = z.lazy(() =>
  z.strictObject({
    prober: name,
    layer: z.enum(['file', 'derived', 'runtime', 'version']),
    facts: jsonValueSchema,
    collectedAt: timestampSchema,
  }),
);

// ---- operation status -------------------------------------------------------------------------

export const operationStateSchema = z.lazy(() =>
  z.enum(['in-progress', 'completed', 'failed', 'interrupted']),
);

/** What recovery at the controller's start observed for an interrupted operation, per file. */
export const recoveryFileSchema = z.lazy(() =>
  z.strictObject({
    path: z.string(),
    liveSha256: sha256Schema.nullable(),
    /** Which side of the write the live file is on: wholly old, wholly new, or something else. */
    matches: z.enum(['before', 'after', 'neither', 'unknown']),
  }),
);

export const operationStatusResponseSchema = z.strictObject({
  operationId: operationIdSchema,
  operation: z.enum(['install', 'capture']),
  state: operationStateSchema,
  startedAt: timestampSchema,
  finishedAt: timestampSchema.nullable(),
  receipt: receiptSchema.optional(),
  error: errorBodySchema.shape.error.optional(),
  recovery: z
    .strictObject({
      detail: z.string(),
      /** True when a coupled action may not have run after the files were written. */
      needsAction: z.boolean(),
      files: z.array(recoveryFileSchema),
    })
    .optional(),
});

export type Health = z.infer<typeof healthSchema>;
export type Catalog = z.infer<typeof catalogSchema>;
export type CarriedPlugin = z.infer<typeof carriedPluginSchema>;
export type IdentityResponse = z.infer<typeof identityResponseSchema>;
export type InventoryResponse = z.infer<typeof inventoryResponseSchema>;
export type InventoryFile = z.infer<typeof inventoryFileSchema>;
export type InventoryBackup = z.infer<typeof inventoryBackupSchema>;
export type ExportRequest = z.infer<typeof exportRequestSchema>;
export type ExportResponse = z.infer<typeof exportResponseSchema>;
export type InstallRequest = z.infer<typeof installRequestSchema>;
export type InstallResponse = z.infer<typeof installResponseSchema>;
export type CaptureRequest = z.infer<typeof captureRequestSchema>;
export type CaptureResponse = z.infer<typeof captureResponseSchema>;
export type ProbeRequest = z.infer<typeof probeRequestSchema>;
export type ProbeResponse = z.infer<typeof probeResponseSchema>;
export type OperationState = z.infer<typeof operationStateSchema>;
export type OperationStatusResponse = z.infer<typeof operationStatusResponseSchema>;
export type RecoveryFile = z.infer<typeof recoveryFileSchema>;
