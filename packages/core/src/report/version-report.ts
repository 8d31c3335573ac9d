/**
 * The version report (`fleet.version/v1`, contract §11): the drift report's form (summary, hosts,
 * items — `fleet.drift/v1`) for the runtime's own lifecycle. Each host carries the runtime it
 * answered with; each item is one fact evaluated: the runtime against `canonicalVersion`, a
 * probed tool, PATH shadowing, a launchd agent, the supervisor's unit or task, a plugin fleet.yaml names
 * (contract §10.5). Items are layer
 * `version` (launchd agents and the supervisor's: `runtime`). Renderers and the report-dir writer are shared in spirit with drift's.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import {
  DRIFT_LAYERS,
  HOST_STATUSES,
  ITEM_STATES,
  hostStatus,
  reportExitCode,
} from './drift-report.js';
import { sha256Schema } from '../wire/protocol.js';
import { fleetOnPathSchema, loginPathSchema } from '../wire/versions.js';
import { compareCodeUnits } from '../compare.js';
import { reportChainSchema } from './report-chain.js';

export const VERSION_SCHEMA = 'fleet.version/v1';
export const VERSION_ITEM_KINDS = [
  'runtime',
  'tool',
  'shadowing',
  'launchd',
  'supervisor',
  'plugin',
] as const;

export const versionItemSchema = z.lazy(() =>
  z.strictObject({
    layer: z.enum(DRIFT_LAYERS),
    kind: z.enum(VERSION_ITEM_KINDS),
    /** The runtime's package, the tool's name, `PATH`, the launchd label, or the plugin's name. */
    name: z.string(),
    path: z.string().optional(),
    state: z.enum(ITEM_STATES),
    /** What was observed (a version, a `--version` line). */
    version: z.string().optional(),
    /** What the repository names (the runtime's `canonicalVersion`, a plugin's pinned version). */
    expected: z.string().optional(),
    /** A plugin's: the sha256 of the tarball the node carries it from (`version` is its version). */
    sha256: z.string().optional(),
    /** A plugin's: the sha256 fleet.yaml pins. */
    expectedSha256: z.string().optional(),
    detail: z.string().optional(),
    /** A tool's: every executable of its name along the PATH, in order (the first runnable runs). */
    onPath: z.array(fleetOnPathSchema).optional(),
  }),
);

export const versionRuntimeSchema = z.lazy(() =>
  z.strictObject({
    package: z.string(),
    version: z.string(),
    build: z.strictObject({ sha256: sha256Schema.nullable(), commit: z.string().nullable() }),
    /** True when the runtime runs from no staged generation (`build` is all `null`). */
    development: z.boolean(),
    platform: z.enum(['linux', 'darwin', 'win32']),
    /** The PATH its tools were probed on and where the node got it (absent: an older node). */
    loginPath: loginPathSchema.optional(),
  }),
);

export const versionHostSchema = z.lazy(() =>
  z.strictObject({
    host: z.string(),
    status: z.enum(HOST_STATUSES),
    detail: z.string().optional(),
    runtime: versionRuntimeSchema.optional(),
    items: z.array(versionItemSchema),
  }),
);

export const versionReportSchema = z.lazy(() =>
  z.strictObject({
    /** The fleet repository the verb used (its real path): on `--json` output, not in report files. */
    repository: z.string().optional(),
    schema: z.literal(VERSION_SCHEMA),
    generatedAt: z.string(),
    repoCommit: z.string(),
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
    hosts: z.array(versionHostSchema),
    /** A scheduled report's link in its schedule's chain (report-chain.ts); absent otherwise. */
    chain: reportChainSchema.optional(),
  }),
);

export type VersionReport = z.infer<typeof versionReportSchema>;
export type VersionHost = z.infer<typeof versionHostSchema>;
export type VersionItem = z.infer<typeof versionItemSchema>;
export type VersionRuntime = z.infer<typeof versionRuntimeSchema>;

/**
 * The PATH a host's tools were probed on, in words (`fleet version`'s text and Markdown): where
 * it came from, then its directories in order.
 */
export function describeLoginPath(path: z.infer<typeof loginPathSchema>): string {
  const where =
    path.source === 'policy'
      ? "the node policy's versions.path"
      : path.source === 'login-shell'
        ? `the user's login PATH (${path.detail}${path.learnedAt ? ` at ${path.learnedAt}` : ''})`
        : `the controller's PATH (${path.detail})`;
  return `tools probed on ${where}: ${path.directories.join(':') || '(empty)'}`;
}

/** A host's status from its items, exactly as drift's. */
export function versionHostStatus(items: readonly VersionItem[]): VersionHost['status'] {
  return hostStatus(items.map((item) => ({ layer: item.layer, state: item.state })));
}

export interface VersionReportInput {
  readonly generatedAt: Date;
  readonly repoCommit: string;
  readonly canonicalVersion: string;
  readonly hosts: readonly VersionHost[];
}

/** Assembles the report: hosts sorted by name, the summary counted from their statuses. */
export function buildVersionReport(input: VersionReportInput): VersionReport {
  const hosts = [...input.hosts].sort((a, b) => compareCodeUnits(a.host, b.host));
  const count = (status: VersionHost['status']) => hosts.filter((h) => h.status === status).length;
  return {
    schema: VERSION_SCHEMA,
    generatedAt: input.generatedAt.toISOString(),
    repoCommit: input.repoCommit,
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

/** Exit code of `fleet version`: the most urgent of the hosts' (4, 5, 1, 0; contract §7). */
export function versionExitCode(report: VersionReport): number {
  return reportExitCode(report.hosts);
}
