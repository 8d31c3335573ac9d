/**
 * The operator's say over audit retention (docs/audit-log.md "Retention"): a node never prunes a
 * segment holding a write's record until its operator released it. `fleet audit verify --home DIR
 * --release`, after a clean verify, writes the head it verified into `audit.release.json` beside
 * the log; the controller's next rotation may then prune segments whose records all lie at or
 * before it (past `auditKeepSegments`). Written atomically, 0600.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditHead } from '@fleet/core';
import { nodeStateDir } from './log.js';

export const RELEASE_FILE = 'audit.release.json';

export async function releaseHomeLog(home: string, head: AuditHead, now: Date): Promise<string> {
  const path = join(nodeStateDir(home), RELEASE_FILE);
  const body = { throughSeq: head.seq, sha256: head.sha256, ts: now.toISOString() };
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(body)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path).catch(async (error: unknown) => {
    await unlink(temp).catch(() => undefined);
    throw error;
  });
  return path;
}
