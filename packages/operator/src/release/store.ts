/**
 * The repository's artifact store (ADR 0018): `.fleet/artifacts/<sha256>.tgz`, git-ignored — the
 * runtime releases and the Node.js builds they ship, each named by its content's sha256.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic.js';

/** The artifact store, relative to the repository root (git-ignored). */
export const ARTIFACT_STORE = '.fleet/artifacts';

export function storeFile(sha256: string): string {
  return `${ARTIFACT_STORE}/${sha256}.tgz`;
}

/**
 * Writes an artifact file: exclusive temp file (0644), fsync, rename; the directory made first.
 * Nothing is written when the file already holds these bytes.
 */
export async function writeStore(
  path: string,
  bytes: Buffer,
  contentAddressed = true,
): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  if (existsSync(path)) {
    const digest = (data: Buffer) => createHash('sha256').update(data).digest('hex');
    const held = digest(await readFile(path));
    // Already there: the same bytes (and, in the store, under their own name).
    if (held === digest(bytes) && (!contentAddressed || `${held}.tgz` === path.split('/').pop())) {
      return;
    }
  }
  await writeFileAtomic(path, bytes);
}
