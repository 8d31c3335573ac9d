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
  const { FleetError } = await import('@fleet/core');
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
  expected?: { readonly sha256: string; readonly commit: string; readonly version: string },
  plugins?: readonly PinnedPlugin[],
): Promise<LoadedArtifact> {
  const {
    BUILD_RECORD_ENTRY,
    FleetError,
    commitLabel,
    describePluginMismatch,
    isFleetError,
    parseBuildRecord,
    pluginMismatches,
    provenanceProblem,
    versionSetProblem,
  } = await import('@fleet/core');
  const { readTgz } = await import('@fleet/controller');
  const path = isAbsolute(file) ? file : join(root, file);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new FleetError(
      'USAGE',
      `cannot read the artifact ${file}: ${String((error as NodeJS.ErrnoException).code ?? error)}`,
    );
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (expected && sha256 !== expected.sha256) {
    throw new FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} has sha256 ${sha256}, but fleet.yaml records ${expected.sha256}; nothing was sent`,
    );
  }
  let pkg: { name?: unknown; version?: unknown } = {};
  let record: BuildRecord | null = null;
  try {
    const entries = readTgz(bytes);
    const entry = entries.find((e) => e.path === 'package/package.json');
    if (entry?.type === 'file') pkg = JSON.parse(entry.data.toString('utf8')) as typeof pkg;
    const build = entries.find((e) => e.path === BUILD_RECORD_ENTRY);
    if (build?.type === 'file') {
      record = parseBuildRecord(build.data.toString('utf8'), `${file}: ${BUILD_RECORD_ENTRY}`);
    }
  } catch (error) {
    if (isFleetError(error)) throw error;
    throw new FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} is not a readable npm tarball: ${(error as Error).message}`,
    );
  }
  if (typeof pkg.name !== 'string' || typeof pkg.version !== 'string') {
    throw new FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} has no package/package.json with a name and version`,
    );
  }
  if (expected && pkg.version !== expected.version) {
    throw new FleetError(
      'GENERATION_INVALID',
      `the artifact ${file} is version ${pkg.version}, but fleet.yaml lists it as ${expected.version}`,
    );
  }
  // A version set after packing (`fleet lab build --version`) is one the build record names.
  const relabelled = versionSetProblem(file, pkg.version, record);
  if (relabelled !== null) throw new FleetError('GENERATION_INVALID', relabelled);
  const carried = record === null ? null : commitLabel(record);
  const problem = provenanceProblem(file, expected?.commit ?? null, carried);
  if (problem !== null) {
    throw new FleetError('ARTIFACT_PROVENANCE', problem, {
      suggestions: [
        carried === null
          ? 'pack the runtime with `npm pack -w packages/cli` from a fleet checkout: its prepack writes the build record'
          : `record commit ${carried} for it in fleet.yaml, or list the artifact built from ${expected?.commit ?? 'that commit'}`,
      ],
    });
  }
  const mismatches = pluginMismatches(plugins ?? [], record?.plugins ?? []);
  if (mismatches.length > 0) {
    throw new FleetError(
      'ARTIFACT_PLUGINS',
      mismatches.map((m) => describePluginMismatch(m, `the artifact ${file}`)).join('; '),
      {
        suggestions: [
          'pack the runtime with every plugin fleet.yaml names: FLEET_RUNTIME_PLUGINS=artifacts/plugins/<plugin>.tgz npm pack -w packages/cli (README, "The runtime artifact")',
        ],
      },
    );
  }
  return {
    bytes,
    identity: {
      file,
      sha256,
      bytes: bytes.length,
      package: pkg.name,
      version: pkg.version,
      commit: carried,
    },
  };
}
