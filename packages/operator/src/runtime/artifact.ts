/**
 * The runtime artifact on the operator's side (contract §3 `artifacts`, §11): read once, its sha256
 * checked against fleet.yaml before anything is sent (the node checks it again after transfer),
 * its package name and version read from the tarball's `package/package.json`, and its commit from
 * the build record it carries (`package/fleet-build.json`, contract §1.8) — fleet.yaml's `commit`
 * must be that one (`ARTIFACT_PROVENANCE`, exit 2), and the acceptance target names it. An artifact
 * to install must carry every plugin fleet.yaml names, as pinned (`ARTIFACT_PLUGINS`, exit 2;
 * contract §10.5). A version set after packing (`fleet lab build --version`) must be the one its
 * build record says was set (`GENERATION_INVALID`).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { ArtifactIdentity, BuildRecord, FleetManifest, PinnedPlugin } from '@fleet/core';
import { FleetError } from '@fleet/core';
import * as core from '@fleet/core';

export interface LoadedArtifact {
  readonly identity: ArtifactIdentity;
  readonly bytes: Buffer;
  /** Its release signature as fleet.yaml pins it (ADR 0019); absent for an unsigned pin. */
  readonly signature?: string;
}

/**
 * The artifact as a bootstrap plan names it: exactly the identity's fields, copied one by one
 * because the plan's schema is strict and the object passed may carry more (contract §12).
 */
export function planArtifactFields(identity: ArtifactIdentity): ArtifactIdentity {
  const { file, sha256, bytes, package: name, version, commit } = identity;
  return { file, sha256, bytes, package: name, version, commit };
}

/** The line `bootstrap plan` and `upgrade` print for an artifact built from a dirty tree. */
export function dirtyWarning(artifact: LoadedArtifact): string | null {
  const commit = artifact.identity.commit;
  if (commit === null || !commit.endsWith('-dirty')) return null;
  return `warning: ${artifact.identity.file} was built from a tree with uncommitted changes (${commit}): it cannot be reconstructed from its commit (contract §1.8)`;
}

/** The artifact fleet.yaml lists for `version` (default: canonicalVersion). */
export async function canonicalArtifact(
  root: string,
  manifest: FleetManifest,
  version: string = manifest.canonicalVersion,
): Promise<LoadedArtifact> {
  const entry = manifest.artifacts.find((artifact) => artifact.version === version);
  if (!entry) {
    throw new FleetError(
      'USAGE',
      `fleet.yaml lists no artifact for version ${version} (artifacts: ${manifest.artifacts.map((a) => a.version).join(', ') || 'none'})`,
    );
  }
  const loaded = await loadArtifact(
    root,
    entry.file,
    { sha256: entry.sha256, commit: entry.commit, version },
    manifest.plugins,
  );
  return entry.signature === undefined ? loaded : { ...loaded, signature: entry.signature };
}

/**
 * Reads an artifact file; with `expected`, its sha256 and version must match it (fleet.yaml's
 * record), else `GENERATION_INVALID`, and its build record's commit must be the one recorded, else
 * `ARTIFACT_PROVENANCE`. An artifact without a build record is refused either way: nothing could
 * tell what it was built from. With `plugins` (fleet.yaml's, for an artifact to install), its
 * build record must list each as pinned, else `ARTIFACT_PLUGINS`. Nothing is sent in any of these
 * cases.
 */
export async function loadArtifact(
  root: string,
  file: string,
  expected?: ExpectedArtifact,
  plugins?: readonly PinnedPlugin[],
): Promise<LoadedArtifact> {
  // Lazy: `fleet validate` reaches this module but reads an artifact only when one is pinned;
  // a static import would load @fleet/controller's index for it (6 → 118 files, measured, README).
  const { readTgz } = await import('@fleet/controller');
  const bytes = await readArtifactFile(root, file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (expected && sha256 !== expected.sha256) {
    throw new core.FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} has sha256 ${sha256}, but fleet.yaml records ${expected.sha256}; nothing was sent`,
    );
  }
  const { pkg, record } = readTarball(readTgz, bytes, file);
  const { name, version } = checkedPackage(file, pkg, record, expected);
  const commit = checkedProvenance(file, record, expected);
  checkPlugins(file, record, plugins ?? []);
  return {
    bytes,
    identity: { file, sha256, bytes: bytes.length, package: name, version, commit },
  };
}

/** fleet.yaml's record of an artifact: what its bytes, version and build record must say. */
interface ExpectedArtifact {
  readonly sha256: string;
  readonly commit: string;
  readonly version: string;
}

/** `package/package.json` as read: fields unchecked. */
interface PackageJson {
  readonly name?: unknown;
  readonly version?: unknown;
}

/** The artifact file's bytes, `file` relative to the repository unless absolute; else `USAGE`. */
async function readArtifactFile(root: string, file: string): Promise<Buffer> {
  const path = isAbsolute(file) ? file : join(root, file);
  try {
    return await readFile(path);
  } catch (error) {
    throw new core.FleetError(
      'USAGE',
      `cannot read the artifact ${file}: ${String((error as NodeJS.ErrnoException).code ?? error)}`,
    );
  }
}

/**
 * The package.json and build record the tarball carries (either absent when it carries none);
 * `GENERATION_INVALID` when it is not a readable npm tarball or its build record is not one.
 */
function readTarball(
  readTgz: (typeof import('@fleet/controller'))['readTgz'],
  bytes: Buffer,
  file: string,
): { pkg: PackageJson; record: BuildRecord | null } {
  try {
    const entries = readTgz(bytes);
    const entry = entries.find((e) => e.path === 'package/package.json');
    const pkg =
      entry?.type === 'file' ? (JSON.parse(entry.data.toString('utf8')) as PackageJson) : {};
    const build = entries.find((e) => e.path === core.BUILD_RECORD_ENTRY);
    const record =
      build?.type === 'file'
        ? core.parseBuildRecord(build.data.toString('utf8'), `${file}: ${core.BUILD_RECORD_ENTRY}`)
        : null;
    return { pkg, record };
  } catch (error) {
    if (core.isFleetError(error)) throw error;
    throw new core.FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} is not a readable npm tarball: ${(error as Error).message}`,
    );
  }
}

/**
 * The package's name and version: both present, the version fleet.yaml lists, and a version set
 * after packing (`fleet lab build --version`) one the build record names; else `GENERATION_INVALID`.
 */
function checkedPackage(
  file: string,
  pkg: PackageJson,
  record: BuildRecord | null,
  expected: ExpectedArtifact | undefined,
): { name: string; version: string } {
  const { name, version } = pkg;
  if (typeof name !== 'string' || typeof version !== 'string') {
    throw new core.FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} has no package/package.json with a name and version`,
    );
  }
  if (expected && version !== expected.version) {
    throw new core.FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} is version ${version}, but fleet.yaml lists it as ${expected.version}`,
    );
  }
  const relabelled = core.versionSetProblem(file, version, record);
  if (relabelled !== null) throw new core.FleetError('GENERATION_INVALID', relabelled);
  return { name, version };
}

/** The commit label the build record carries, which must be fleet.yaml's; else `ARTIFACT_PROVENANCE`. */
function checkedProvenance(
  file: string,
  record: BuildRecord | null,
  expected: ExpectedArtifact | undefined,
): string | null {
  const carried = record === null ? null : core.commitLabel(record);
  const problem = core.provenanceProblem(file, expected?.commit ?? null, carried);
  if (problem !== null) {
    throw new core.FleetError('ARTIFACT_PROVENANCE', problem, {
      suggestions: [
        carried === null
          ? 'pack the runtime with `npm pack -w packages/cli` from a fleet checkout: its prepack writes the build record'
          : `record commit ${carried} for it in fleet.yaml, or list the artifact built from ${expected?.commit ?? 'that commit'}`,
      ],
    });
  }
  return carried;
}

/** Every plugin fleet.yaml pins carried as pinned (contract §10.5); else `ARTIFACT_PLUGINS`. */
function checkPlugins(
  file: string,
  record: BuildRecord | null,
  plugins: readonly PinnedPlugin[],
): void {
  const mismatches = core.pluginMismatches(plugins, record?.plugins ?? []);
  if (mismatches.length > 0) {
    throw new core.FleetError(
      'ARTIFACT_PLUGINS',
      mismatches.map((m) => core.describePluginMismatch(m, `the artifact ${file}`)).join('; '),
      {
        suggestions: [
          'pack the runtime with every plugin fleet.yaml names: FLEET_RUNTIME_PLUGINS=artifacts/plugins/<plugin>.tgz npm pack -w packages/cli (README, "The runtime artifact")',
        ],
      },
    );
  }
}
