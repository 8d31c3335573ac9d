/**
 * Replacing an operator-side file whole (fleet.yaml, hosts/NAME.yaml, .gitignore, an artifact in
 * the store): an exclusive temp file beside it (0644), written and fsync'd, then renamed over it —
 * a reader sees the old file or the new one, never half of one. The temp file is removed when the
 * rename fails.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
