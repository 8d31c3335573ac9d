/**
 * What a staged generation is and how it is checked (contract §12): its manifest
 * (`generation.json`, {@link generationManifestSchema}) and the verification of a generation
 * directory from disk — manifest, artifact sha256 = build id, tree hash, modes — that staging runs
 * before its rename and on a reuse, and that a held generation and a rollback's target rely on.
 * Apart from staging (generation.ts) because it reads a generation and never writes one;
 * `invalid`, the `GENERATION_INVALID` error, and `MODES_APPLY` serve both.
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from '@fleet/core/zod';
import {
  BUILD_ID_PATTERN,
  FleetError,
  GENERATION_ARTIFACT,
  GENERATION_MANIFEST,
  parseStrictJson,
  type RuntimeLayout,
} from '@fleet/core/node';
import { diskTree, sha256Hex } from './tree.js';

export const GENERATION_SCHEMA = 'fleet.generation/v1';

export const generationManifestSchema = z.strictObject({
  schema: z.literal(GENERATION_SCHEMA),
  buildId: z.string().regex(BUILD_ID_PATTERN),
  treeHash: z.string().regex(/^[0-9a-f]{64}$/),
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  /** From the tarball's `package/package.json`, when it has one. */
  package: z.strictObject({ name: z.string(), version: z.string() }).nullable(),
  /**
   * The commit label the artifact's own build record names (`package/fleet-build.json`, contract
   * §1.8), `null` for an artifact without one. Read from the artifact at staging, never taken
   * from a request.
   */
  commit: z.string().nullable(),
  stagedAt: z.string(),
});
export type GenerationManifest = z.infer<typeof generationManifestSchema>;

export type GenerationCheck =
  | { readonly ok: true; readonly manifest: GenerationManifest }
  | { readonly ok: false; readonly problems: readonly string[] };

export const MODES_APPLY = process.platform !== 'win32';

export function invalid(message: string, problems: readonly string[] = []): FleetError {
  return new FleetError('GENERATION_INVALID', message, {
    problems: problems.map((message) => ({ message })),
  });
}

/** Verifies a generation on disk: manifest, artifact sha256 = build id, tree hash, modes. */
export async function verifyGeneration(
  layout: RuntimeLayout,
  buildId: string,
): Promise<GenerationCheck> {
  return verifyDirectory(layout.generation(buildId), buildId);
}

export async function verifyDirectory(
  directory: string,
  buildId: string,
): Promise<GenerationCheck> {
  const problems: string[] = [];
  try {
    const stats = await lstat(directory);
    if (!stats.isDirectory()) return { ok: false, problems: ['not a directory'] };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, problems: [code === 'ENOENT' ? 'missing' : `unreadable (${code})`] };
  }
  let manifest: GenerationManifest | undefined;
  try {
    const raw = parseStrictJson(
      await readFile(join(directory, GENERATION_MANIFEST), 'utf8'),
      GENERATION_MANIFEST,
      'GENERATION_INVALID',
    );
    const parsed = generationManifestSchema.safeParse(raw);
    if (parsed.success) manifest = parsed.data;
    else problems.push(`${GENERATION_MANIFEST} is not a generation manifest`);
  } catch (error) {
    problems.push(`${GENERATION_MANIFEST}: ${(error as Error).message}`);
  }
  if (manifest && manifest.buildId !== buildId) {
    problems.push(`${GENERATION_MANIFEST} names build ${manifest.buildId}, not ${buildId}`);
  }
  try {
    const artifact = await readFile(join(directory, GENERATION_ARTIFACT));
    if (sha256Hex(artifact) !== buildId)
      problems.push(`${GENERATION_ARTIFACT}'s sha256 is not the build id`);
  } catch (error) {
    problems.push(
      `${GENERATION_ARTIFACT}: ${String((error as NodeJS.ErrnoException).code ?? error)}`,
    );
  }
  try {
    const tree = await diskTree(directory);
    if (manifest && tree.listing.hash !== manifest.treeHash) {
      problems.push(
        `tree hash ${tree.listing.hash} differs from the recorded ${manifest.treeHash}`,
      );
    }
    if (tree.foreign.length > 0)
      problems.push(`not a file or directory: ${tree.foreign.slice(0, 5).join(', ')}`);
    if (MODES_APPLY && tree.writable.length > 0) {
      problems.push(`writable (not 0444/0555): ${tree.writable.slice(0, 5).join(', ')}`);
    }
    if (MODES_APPLY) {
      const top = await lstat(directory);
      if ((top.mode & 0o777) !== 0o555) problems.push('the generation directory is not 0555');
      for (const name of [GENERATION_MANIFEST, GENERATION_ARTIFACT]) {
        const stats = await lstat(join(directory, name)).catch(() => undefined);
        if (stats && (stats.mode & 0o777) !== 0o444) problems.push(`${name} is not 0444`);
      }
    }
  } catch (error) {
    problems.push(`tree: ${String((error as NodeJS.ErrnoException).code ?? error)}`);
  }
  return problems.length === 0 && manifest ? { ok: true, manifest } : { ok: false, problems };
}

/** The manifest of a staged generation, verified (for rollback targets: catalogue 52). */
export async function requireVerifiedGeneration(
  layout: RuntimeLayout,
  buildId: string,
): Promise<GenerationManifest> {
  const check = await verifyGeneration(layout, buildId);
  if (!check.ok) {
    throw invalid(`generation ${buildId} does not verify`, check.problems);
  }
  return check.manifest;
}
