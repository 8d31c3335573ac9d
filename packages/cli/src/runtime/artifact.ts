/**
 * The runtime artifact on the operator's side (contract §3 `artifacts`, §11): read once, its sha256
 * checked against fleet.yaml before anything is sent (the node checks it again after transfer),
 * and its package name and version read from the tarball's `package/package.json`.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { ArtifactIdentity, FleetManifest } from '@fleet/core';

export interface LoadedArtifact {
  readonly identity: ArtifactIdentity;
  readonly bytes: Buffer;
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
  return loadArtifact(root, entry.file, { sha256: entry.sha256, commit: entry.commit, version });
}

/**
 * Reads an artifact file; with `expected`, its sha256 and version must match it (fleet.yaml's
 * record), else `GENERATION_INVALID` and nothing is sent.
 */
export async function loadArtifact(
  root: string,
  file: string,
  expected?: { readonly sha256: string; readonly commit: string; readonly version: string },
): Promise<LoadedArtifact> {
  const { FleetError } = await import('@fleet/core');
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
  try {
    const entry = readTgz(bytes).find((e) => e.path === 'package/package.json');
    if (entry?.type === 'file') pkg = JSON.parse(entry.data.toString('utf8')) as typeof pkg;
  } catch (error) {
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
  return {
    bytes,
    identity: {
      file,
      sha256,
      bytes: bytes.length,
      package: pkg.name,
      version: pkg.version,
      commit: expected?.commit ?? null,
    },
  };
}
