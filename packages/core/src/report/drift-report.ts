/**
 * The drift report (`fleet.drift/v1`, contract §8.1): its schema, and the pure assembly of per-host
 * results into a report with its summary. Renderers (Markdown, HTML) and the report-dir writer
 * live beside this file.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { ExitCode, mostUrgentExit, type FleetErrorLike } from '../errors.js';
import { compareCodeUnits } from '../compare.js';
import { reportChainSchema } from './report-chain.js';

export const DRIFT_SCHEMA = 'fleet.drift/v1';
export const DRIFT_LAYERS = ['file', 'derived', 'runtime', 'version'] as const;
export const ITEM_STATES = [
  'current',
  'stale',
  'modified',
  'diverged',
  'missing',
  'deleted',
  'unmanaged',
  'unsupported',
  'error',
] as const;
/** `denied`: the host refused the credentials (exit 4, contract §7) — not a generic `error`. */
export const HOST_STATUSES = ['current', 'drifted', 'unreachable', 'denied', 'error'] as const;

const lineSchema = z.lazy(() =>
  z.strictObject({ line: z.number().int().min(1), text: z.string() }),
);

/** A known version (contract §8.2): a commit of the repository, or a content fleet wrote on the host. */
export const knownVersionSchema = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('commit'), commit: z.string(), date: z.string().optional() }),
    z.strictObject({ kind: z.literal('installed'), at: z.string(), operationId: z.string() }),
  ]),
);

export const driftItemSchema = z.lazy(() =>
  z.strictObject({
    layer: z.enum(DRIFT_LAYERS),
    domain: z.string().optional(),
    path: z.string().optional(),
    state: z.enum(ITEM_STATES),
    localLines: z.number().int().min(0).optional(),
    /** For `diverged`: the local lines (redacted), each with its line number in the live file. */
    lines: z.array(lineSchema).optional(),
    /**
     * The known version named: for `stale` the one the file equals, for `modified` the one it is
     * described against, for `deleted` fleet's last write there.
     */
    version: knownVersionSchema.optional(),
    /** For `modified` (redacted): lines of `version` the file lacks (their line numbers there)… */
    deletedLines: z.array(lineSchema).optional(),
    /** …lines of it out of order (line numbers in the live file)… */
    movedLines: z.array(lineSchema).optional(),
    /** …and known lines it adds: repeated, or from another known version. */
    addedLines: z.array(lineSchema).optional(),
    /**
     * A whole file's mode when it is not the one the repository says (contract §10.4): the live
     * one, the repository's, and the one fleet last wrote it with (absent: none recorded).
     */
    mode: z
      .strictObject({ live: z.string(), wanted: z.string(), written: z.string().optional() })
      .optional(),
    /**
     * True when the state is of the file's managed block, not of the whole file (a block file that
     * exists): "missing block" is a file without its block, "missing file" no file at all.
     */
    block: z.literal(true).optional(),
    /** The secret names the live file holds an earlier value of (rotated since; names only). */
    rotatedSecrets: z.array(z.string()).optional(),
    detail: z.string().optional(),
    diff: z.string().optional(),
  }),
);

export const driftHostSchema = z.lazy(() =>
  z.strictObject({
    host: z.string(),
    status: z.enum(HOST_STATUSES),
    detail: z.string().optional(),
    items: z.array(driftItemSchema),
  }),
);

export const driftReportSchema = z.lazy(() =>
  z.strictObject({
    /** The fleet repository the verb used (its real path): on `--json` output, not in report files. */
    repository: z.string().optional(),
    schema: z.literal(DRIFT_SCHEMA),
    generatedAt: z.string(),
    /** The commit fleet.yaml, hosts/ and domains/ were all read at (HEAD when the run started). */
    repoCommit: z.string(),
    /** Paths under fleet.yaml, hosts/ and domains/ with uncommitted changes: not in this report. */
    uncommitted: z.array(z.string()).optional(),
    canonicalVersion: z.string(),
    summary: z.strictObject({
      hosts: z.number().int(),
      current: z.number().int(),
      drifted: z.number().int(),
      unreachable: z.number().int(),
      /** Hosts that refused the credentials (absent in reports written before it was counted). */
      denied: z.number().int().optional(),
      errors: z.number().int(),
    }),
    hosts: z.array(driftHostSchema),
    /** A scheduled report's link in its schedule's chain (report-chain.ts); absent otherwise. */
    chain: reportChainSchema.optional(),
  }),
);

export type DriftReport = z.infer<typeof driftReportSchema>;
export type DriftHost = z.infer<typeof driftHostSchema>;
export type DriftReportItem = z.infer<typeof driftItemSchema>;
export type HostStatus = (typeof HOST_STATUSES)[number];

/** A host's status from its items: any error item makes it `error`, any non-current `drifted`. */
export function hostStatus(items: readonly DriftReportItem[]): HostStatus {
  if (items.some((item) => item.state === 'error')) return 'error';
  if (items.some((item) => item.state !== 'current')) return 'drifted';
  return 'current';
}

export interface DriftReportInput {
  readonly generatedAt: Date;
  readonly repoCommit: string;
  readonly uncommitted?: readonly string[];
  readonly canonicalVersion: string;
  readonly hosts: readonly DriftHost[];
}

/** Assembles the report: hosts sorted by name, the summary counted from their statuses. */
export function buildDriftReport(input: DriftReportInput): DriftReport {
  const hosts = [...input.hosts].sort((a, b) => compareCodeUnits(a.host, b.host));
  const count = (status: HostStatus) => hosts.filter((h) => h.status === status).length;
  return {
    schema: DRIFT_SCHEMA,
    generatedAt: input.generatedAt.toISOString(),
    repoCommit: input.repoCommit,
    ...(input.uncommitted && input.uncommitted.length > 0
      ? { uncommitted: [...input.uncommitted] }
      : {}),
    canonicalVersion: input.canonicalVersion,
    summary: {
      hosts: hosts.length,
      current: count('current'),
      drifted: count('drifted'),
      unreachable: count('unreachable'),
      denied: count('denied'),
      errors: count('error'),
    },
    hosts,
  };
}

/** Each host status's own exit code (contract §7): an error item or a drift is 1. */
const HOST_STATUS_EXIT: Readonly<Record<HostStatus, number>> = {
  current: ExitCode.ok,
  drifted: ExitCode.drift,
  error: ExitCode.drift,
  unreachable: ExitCode.unreachable,
  denied: ExitCode.auth,
};

/**
 * Exit code of `fleet drift` and `fleet version` (contract §7): the most urgent of the hosts' —
 * 4 when a host refused the credentials, else 5 when one was unreachable, else 1 when any
 * drifted or failed, else 0.
 */
export function reportExitCode(hosts: readonly { readonly status: HostStatus }[]): number {
  return mostUrgentExit(hosts.map((host) => HOST_STATUS_EXIT[host.status]));
}

/** Exit code of `fleet drift` (contract §7), as {@link reportExitCode}. */
export function driftExitCode(report: DriftReport): number {
  return reportExitCode(report.hosts);
}

/**
 * A host whose read failed: `denied` when it refused the credentials (an exit-4 code),
 * `unreachable` when it did not answer in time, else `error`; the detail names the code.
 */
export function failedHostStatus(error: FleetErrorLike): HostStatus {
  if (error.exitCode === ExitCode.auth) return 'denied';
  return UNREACHABLE_CODES.has(error.code) ? 'unreachable' : 'error';
}

const UNREACHABLE_CODES = new Set(['HOST_UNREACHABLE', 'REQUEST_TIMEOUT']);

/** The worst state of a host's items in one layer, for the matrix (`undefined`: no items). */
export function layerState(
  host: DriftHost,
  layer: (typeof DRIFT_LAYERS)[number],
): string | undefined {
  const order = [
    'error',
    'diverged',
    'modified',
    'deleted',
    'unsupported',
    'missing',
    'stale',
    'unmanaged',
    'current',
  ];
  const states = host.items.filter((item) => item.layer === layer).map((item) => item.state);
  if (states.length === 0) return undefined;
  return order.find((state) => states.includes(state as (typeof ITEM_STATES)[number]));
}
