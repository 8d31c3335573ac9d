/**
 * `POST /v1/versions` (contract §11, `fleet version`): the node's runtime identity, the versions of
 * the tools the operator names (fleet.yaml `probes.tools`) that the node policy lists
 * (`versions.tools`; any other is answered `refused`, never run) with every executable of each
 * name along the PATH in order, every `fleet` executable along it (both for PATH shadowing), the
 * PATH itself (the policy's, the user's login PATH the node learned, or the controller's), and on
 * macOS the launchd agents of fleet.
 * Read-only; one request per host. The node only observes: deciding what is stale, missing or
 * shadowing is the operator's (`config/version.ts` and its `version-*.ts` siblings).
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { jsonObjectSchema, sha256Schema, timestampSchema } from './protocol.js';
import { snapshotProbeResultSchema } from './snapshot.js';
import { pinnedPluginSchema } from '../schemas/runtime-plugins.js';
import { toolNameSchema } from '../schemas/tool-name.js';

/** Tools one request may name. */
export const MAX_VERSION_TOOLS = 32;
/** `fleet` executables reported along PATH at most. */
export const MAX_FLEET_ON_PATH = 32;
/** A version line is cut to this many characters. */
export const MAX_VERSION_TEXT = 200;

/**
 * launchd labels a macOS node reads (read-only: `launchctl print gui/<uid>/<label>`): the
 * controller's agent (plugins/bootstrap-launchd) and the agents `fleet schedule install` writes
 * (`dev.fleet.report-<slug>`, one per schedulable job) — fleet's one label scheme.
 */
export const FLEET_LAUNCHD_LABELS = [
  'dev.fleet.controller',
  'dev.fleet.report-drift',
  'dev.fleet.report-version',
  'dev.fleet.report-harness-reconcile',
] as const;

/**
 * Labels of an earlier scheme (`dev.fleet.schedule.<slug>`, `org.fleet.report-<slug>`): read when
 * their plist is in `~/Library/LaunchAgents` and reported stale; `fleet schedule install` of the
 * same job migrates them.
 */
export const LEGACY_LAUNCHD_LABEL =
  /^(dev\.fleet\.schedule\.|org\.fleet\.report-)[a-z][a-z-]{0,40}$/;

/** Probers one versions request may run: the host's supervisor's, with room to spare. */
export const MAX_VERSION_PROBES = 8;

/**
 * A prober of no domain to run in the same read (contract §5): the supervisor's `runtime` prober
 * (`systemd-user.unit`, `windows-task.task`) or a `version` prober. A domain's prober is answered
 * `SCOPE_DENIED`: its facts are a domain's, read with `config:read` through a snapshot.
 */
export const versionsProbeSchema = z.lazy(() =>
  z.strictObject({
    prober: z.string().min(1).max(200),
    parameters: jsonObjectSchema,
  }),
);

export const versionsRequestSchema = z.lazy(() =>
  z.strictObject({
    tools: z.array(toolNameSchema).max(MAX_VERSION_TOOLS),
    /**
     * Added within protocol 2: a node that predates it refuses the key (`BAD_REQUEST`), and the
     * operator then asks `POST /v1/probe` instead (`config/version-transport.ts`).
     */
    probes: z.array(versionsProbeSchema).max(MAX_VERSION_PROBES).optional(),
  }),
);

const versionText = z.lazy(() => z.string().max(MAX_VERSION_TEXT));

/**
 * One executable of a name along PATH, in PATH order: runnable (with the version it reports) or
 * dead (a broken symbolic link, not executable, its interpreter gone, `--version` failing).
 */
export const fleetOnPathSchema = z.lazy(() =>
  z.strictObject({
    path: z.string(),
    runnable: z.boolean(),
    /** The semantic version it reported (`null`: dead, or its output names none). */
    version: z.string().nullable(),
    /** Why it is dead (not executable, broken symlink, exit status, timeout), or its output line. */
    detail: versionText,
  }),
);

/**
 * Every executable of a tool's name along the PATH, in order (for PATH shadowing of every probed
 * tool, not only `fleet`). Absent from a node that predates it.
 */
const onPath = z.lazy(() => z.array(fleetOnPathSchema).max(MAX_FLEET_ON_PATH).optional());

export const versionsToolSchema = z.lazy(() =>
  z.discriminatedUnion('state', [
    /** The one a shell runs (`path`) exited 0 from `--version`: its first output line. */
    z.strictObject({
      name: toolNameSchema,
      state: z.literal('found'),
      path: z.string(),
      version: versionText,
      onPath,
    }),
    /** The one a shell runs (`path`) failed its `--version` (exit code, timeout, no output). */
    z.strictObject({
      name: toolNameSchema,
      state: z.literal('failed'),
      path: z.string(),
      detail: versionText,
      onPath,
    }),
    /**
     * Nothing of that name can run: none on PATH, only dead links, or the one a shell runs
     * (`path`) has an interpreter that is gone (`#!/opt/py3.9/bin/python3` removed) — `detail`
     * says which.
     */
    z.strictObject({
      name: toolNameSchema,
      state: z.literal('missing'),
      path: z.string().optional(),
      detail: versionText.optional(),
      onPath,
    }),
    /** Not run: the node policy does not list it in `versions.tools` (contract §5.1). */
    z.strictObject({ name: toolNameSchema, state: z.literal('refused'), detail: versionText }),
  ]),
);

/** Directories of a login PATH reported at most (a longer PATH is cut, in order). */
export const MAX_LOGIN_PATH_DIRECTORIES = 128;

/**
 * The PATH the tools were resolved on and run with, and where the node got it (docs/version.md):
 * the node policy's `versions.path`; the user's login PATH the controller learned from the login
 * shell of its passwd entry (`learnedAt`); or the controller's own PATH when it could not learn
 * one (`detail` says why).
 */
export const loginPathSchema = z.lazy(() =>
  z.strictObject({
    source: z.enum(['policy', 'login-shell', 'controller']),
    directories: z.array(z.string()).max(MAX_LOGIN_PATH_DIRECTORIES),
    /** When the controller learned it (`null`: the policy's, or the controller's own PATH). */
    learnedAt: timestampSchema.nullable(),
    detail: z.string().max(MAX_VERSION_TEXT * 2),
  }),
);

/** `launchctl print` of one label, parsed (darwin only). */
export const launchdAgentSchema = z.lazy(() =>
  z.strictObject({
    label: z.string(),
    /** Its plist exists in `~/Library/LaunchAgents/`. */
    present: z.boolean(),
    /** launchd knows the service in the user's gui domain. */
    loaded: z.boolean(),
    /** launchd's `state` line (`running`, `not running`…), when loaded. */
    state: z.string().nullable(),
    pid: z.number().int().nullable(),
    /** `last exit code`; `null` when it never exited or is not loaded. */
    lastExitStatus: z.number().int().nullable(),
  }),
);

export const versionsResponseSchema = z.lazy(() =>
  z.strictObject({
    nodeId: z.string(),
    package: z.string(),
    version: z.string(),
    /**
     * The running runtime's build identity: the generation its script sits in. Both `null`: a
     * development build (not run from a staged generation).
     */
    build: z.strictObject({ sha256: sha256Schema.nullable(), commit: z.string().nullable() }),
    platform: z.enum(['linux', 'darwin', 'win32']),
    tools: z.array(versionsToolSchema),
    fleet: z.array(fleetOnPathSchema).max(MAX_FLEET_ON_PATH),
    /** The PATH the tools were probed on and where it came from (absent from an older node). */
    loginPath: loginPathSchema.optional(),
    /**
     * The third-party plugins the node loaded from its generation (its catalog's `plugins`, contract
     * §10.5), each with its verified pin. Absent from a runtime that predates them: none reported.
     */
    plugins: z.array(pinnedPluginSchema).optional(),
    /** Present on darwin only. */
    launchd: z.array(launchdAgentSchema).optional(),
    /** Present when the request named `probes`: each prober's facts, or why it did not run. */
    probes: z.array(snapshotProbeResultSchema).optional(),
    collectedAt: timestampSchema,
  }),
);

export type VersionsRequest = z.infer<typeof versionsRequestSchema>;
export type VersionsResponse = z.infer<typeof versionsResponseSchema>;
export type VersionsTool = z.infer<typeof versionsToolSchema>;
export type FleetOnPath = z.infer<typeof fleetOnPathSchema>;
export type LoginPath = z.infer<typeof loginPathSchema>;
export type LaunchdAgent = z.infer<typeof launchdAgentSchema>;
export type VersionsProbe = z.infer<typeof versionsProbeSchema>;
