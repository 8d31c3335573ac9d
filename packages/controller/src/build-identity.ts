/**
 * The running controller's build identity (contract §5, §12): the generation its script sits in.
 *
 * A runtime started from a staged generation runs `…/runtime/generations/<build-id>/package/bin/
 * run.js` (its supervisor names it through the `current` pointer; the real path is resolved, so
 * the pointer's later switches do not change what this process is). Its identity is that
 * generation's `generation.json`: `sha256` = the build id (the artifact's sha256, checked at
 * staging), `commit` = the source commit recorded there.
 *
 * Anything else — a checkout, `npm link`, a generation whose manifest is missing, unreadable or
 * names another build — is a **development build**: `{ sha256: null, commit: null }` on the wire
 * (`buildLabel` shows it as `+dev`). Nothing from the environment can claim an identity: the
 * acceptance of an upgrade (contract §12) compares exactly this.
 */
import { readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  GENERATION_NAME_PATTERN,
  GENERATIONS_DIR,
  GENERATION_MANIFEST,
  isGenerationNameOf,
  parseStrictJson,
} from '@fleet/core/node';
import { generationManifestSchema } from './generations/verify.js';
import type { BuildIdentity } from './runtime.js';

export const DEVELOPMENT_BUILD: BuildIdentity = { sha256: null, commit: null };

/**
 * The generation directory (`…/generations/<build-id>`, on Windows `…/generations/<16 hex>`) a
 * path lies in, or `null`. Pure: the
 * path should already be real (symlinks resolved).
 */
export function generationDirOf(path: string): string | null {
  let dir = dirname(path);
  for (;;) {
    if (GENERATION_NAME_PATTERN.test(basename(dir)) && basename(dirname(dir)) === GENERATIONS_DIR) {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The build identity of the runtime whose entry script is `script` (default: this process's
 * `process.argv[1]`): its generation's manifest, or the development build.
 */
export async function buildIdentityOf(
  script: string | undefined = process.argv[1],
): Promise<BuildIdentity> {
  if (script === undefined || script === '') return DEVELOPMENT_BUILD;
  let real: string;
  try {
    real = await realpath(script);
  } catch {
    return DEVELOPMENT_BUILD;
  }
  const dir = generationDirOf(real);
  if (dir === null) return DEVELOPMENT_BUILD;
  try {
    const raw = parseStrictJson(
      await readFile(join(dir, GENERATION_MANIFEST), 'utf8'),
      GENERATION_MANIFEST,
      'GENERATION_INVALID',
    );
    const parsed = generationManifestSchema.safeParse(raw);
    // The directory is the build id, or its Windows short name (docs/runtime-lifecycle.md).
    if (!parsed.success || !isGenerationNameOf(basename(dir), parsed.data.buildId))
      return DEVELOPMENT_BUILD;
    return {
      sha256: parsed.data.buildId,
      commit: parsed.data.commit,
      package: parsed.data.package,
    };
  } catch {
    return DEVELOPMENT_BUILD;
  }
}
