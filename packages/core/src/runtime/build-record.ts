/**
 * The build record a runtime artifact carries (contract §1.8, §3 `artifacts`): `package/fleet-build.json`
 * in the `npm pack` tarball, written at pack time by `scripts/build-record.mjs` (@fleet/cli's
 * `prepack`; npm 11 records no `gitHead`). It names the commit the artifact was built from and
 * whether the tree had uncommitted changes. Both sides read it from the artifact itself — the
 * operator before anything is sent, the node when it stages the generation — so fleet.yaml's
 * `commit` is checked against the artifact instead of being compared with itself. It also lists the
 * third-party plugins the artifact carries (contract §10.5), each pinned by its tarball's sha256.
 *
 * The commit *label* is what travels (fleet.yaml, plan, journal, `build.commit` on the wire): the
 * commit hash, with `-dirty` appended for a build from a tree with uncommitted changes — such a
 * build is not reconstructable from its commit, and fleet.yaml has to say so to name it.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { FleetError } from '../errors.js';
import { parseStrictJson } from '../json.js';
import { pinnedPluginsSchema } from '../schemas/runtime-plugins.js';

/** The record's path inside the artifact's package directory. */
export const BUILD_RECORD_FILE = 'fleet-build.json';
/** Its path inside the tarball (`npm pack` puts the package under `package/`). */
export const BUILD_RECORD_ENTRY = `package/${BUILD_RECORD_FILE}`;
export const BUILD_RECORD_SCHEMA = 'fleet.build/v1';
/** Who may set an artifact's version after packing (the build record's `versionSet.by`). */
export const VERSION_SET_BY_LAB = 'fleet lab build';
export const VERSION_SET_BY_RELEASE = 'fleet release';

const semanticVersion = z.lazy(() =>
  z
    .string()
    .regex(
      /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/,
      'must be a semantic version',
    ),
);

/** A full git object id: sha-1 (40) or sha-256 (64) lower-case hex. Abbreviations are ambiguous. */
const fullCommit = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export const buildRecordSchema = z.lazy(() =>
  z.strictObject({
    schema: z.literal(BUILD_RECORD_SCHEMA),
    commit: z.string().regex(fullCommit, 'must be a full git commit hash (40 or 64 hex digits)'),
    /** The work tree had uncommitted changes (tracked or untracked, not ignored) when it was packed. */
    dirty: z.boolean(),
    /**
     * The third-party plugins packed inside (contract §10.5; runtime/plugins.ts): what the node
     * loads from its generation besides the bundled ones. Absent in an artifact packed without any.
     */
    plugins: pinnedPluginsSchema.default([]),
    /**
     * Present when the package's version was set after `npm pack` rather than taken from the
     * checkout: `fleet lab build --version V` does so to give a lab a second build of one checkout
     * (docs/runtime-lifecycle.md), and `fleet release --version V` to release a fleet whose
     * plugins changed without a new fleet version (docs/releases.md). `from` is the checkout's
     * version, `to` the one written into `package/package.json`, which must then say `to`. Its
     * commit is still the one it was packed from: `fleet release verify` packs that commit and
     * sets the same version again.
     */
    versionSet: z
      .strictObject({
        by: z.enum([VERSION_SET_BY_LAB, VERSION_SET_BY_RELEASE]),
        from: semanticVersion,
        to: semanticVersion,
      })
      .optional(),
  }),
);
export type BuildRecord = z.infer<typeof buildRecordSchema>;

/** The label of a record: its commit, `-dirty` appended for a dirty build. */
export function commitLabel(record: BuildRecord): string {
  return record.dirty ? `${record.commit}-dirty` : record.commit;
}

/**
 * The check of a version set after packing (pure): the package's version must be the one the build
 * record says was set. Returns the one-line problem, or `null` when they agree (or none was set).
 */
export function versionSetProblem(
  file: string,
  packageVersion: string,
  record: BuildRecord | null,
): string | null {
  const set = record?.versionSet;
  if (set === undefined || set.to === packageVersion) return null;
  return `${file} is version ${packageVersion}, but its build record says ${set.by} set it to ${set.to} (from ${set.from})`;
}

/** True when a label names a build from a tree with uncommitted changes. */
export function isDirtyLabel(label: string | null): boolean {
  return label !== null && label.endsWith('-dirty');
}

/** Parses a build record's text; `GENERATION_INVALID` naming `source` when it is not one. */
export function parseBuildRecord(text: string, source: string): BuildRecord {
  const value = parseStrictJson(text, source, 'GENERATION_INVALID');
  const parsed = buildRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FleetError(
      'GENERATION_INVALID',
      `${source} is not a build record: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'bad shape'}`,
    );
  }
  return parsed.data;
}

/**
 * The check of contract §1.8 (pure): fleet.yaml's `commit` for an artifact (`recorded`; `null` for
 * an artifact fleet.yaml does not list) must be the artifact's own label (`carried`; `null` when
 * it has no build record, which never passes). Returns the one-line problem naming both, or
 * `null` when they agree.
 */
export function provenanceProblem(
  file: string,
  recorded: string | null,
  carried: string | null,
): string | null {
  if (carried === null) {
    return `${file} carries no build record (${BUILD_RECORD_ENTRY}): it was not packed by fleet's prepack, so ${recorded === null ? 'what it was built from cannot be told' : `the commit ${recorded} fleet.yaml records for it cannot be checked`}`;
  }
  if (recorded === null || carried === recorded) return null;
  return `fleet.yaml records commit ${recorded} for ${file}, but the artifact was built from ${carried}`;
}
