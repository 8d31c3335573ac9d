/**
 * `POST /v1/snapshot` (core `wire/snapshot.ts`): the config verbs' one read per host — every
 * requested managed file, redacted, with the redacted contents of the backups the node holds of
 * it, newest first. A file that cannot be read safely is answered `refused` with its code; the
 * others are still answered. Backup contents are bounded per answer (`truncated` says when cut).
 */
import { join } from 'node:path';
import {
  isFleetError,
  redactSecrets,
  type SecretValues,
  type SnapshotFile,
  type SnapshotRequest,
  type SnapshotResponse,
} from '@fleet/core';
import type { AllowedPath } from '../allowlist.js';
import { backupFileId, listBackups } from '../backups.js';
import { decodeText, readLive, targetOf } from '../fs/safe-path.js';
import type { ControllerRuntime } from '../runtime.js';
import { STATE_DIR } from '../state-paths.js';
import type { Handler } from './types.js';

/** Bytes of backup content one snapshot carries at most. */
const BACKUP_BUDGET = 8 * 1024 * 1024;

interface Budget {
  left: number;
  truncated: boolean;
}

async function backupsOf(
  runtime: ControllerRuntime,
  entry: AllowedPath,
  secrets: SecretValues,
  budget: Budget,
): Promise<{ path: string; sha256: string; content: string }[]> {
  const out: { path: string; sha256: string; content: string }[] = [];
  const names = (await listBackups(join(runtime.state.backups, entry.domain)))
    .filter((backup) => backup.parsed.fileId === backupFileId(entry.fileId))
    .reverse();
  for (const { name } of names) {
    const path = `~/${STATE_DIR}/backups/${entry.domain}/${name}`;
    try {
      const live = await readLive(
        runtime.home,
        targetOf(runtime.home, path),
        runtime.limits.maxFileBytes,
      );
      if (live === null) continue;
      if (live.size > budget.left) {
        budget.truncated = true;
        break;
      }
      budget.left -= live.size;
      out.push({
        path,
        sha256: live.sha256,
        content: redactSecrets(decodeText(live.bytes, path), secrets),
      });
    } catch {
      // a backup that is not safe text is left out (inventory still lists it)
    }
  }
  return out;
}

async function snapshotFile(
  runtime: ControllerRuntime,
  path: string,
  withBackups: boolean,
  secrets: SecretValues,
  budget: Budget,
): Promise<SnapshotFile> {
  try {
    const entry = runtime.allowlist.require(path);
    const live = await readLive(
      runtime.home,
      targetOf(runtime.home, path),
      runtime.limits.maxFileBytes,
    );
    const backups = withBackups ? await backupsOf(runtime, entry, secrets, budget) : [];
    if (live === null) return { path, state: 'absent', backups };
    const text = decodeText(live.bytes, path);
    const content = redactSecrets(text, secrets);
    return {
      path,
      state: 'present',
      size: live.size,
      mtime: live.mtime.toISOString(),
      sha256: live.sha256,
      content,
      redacted: content !== text,
      backups,
    };
  } catch (error) {
    const code = isFleetError(error) ? error.code : 'IO_ERROR';
    const message = isFleetError(error) ? error.message : 'the file could not be read';
    return { path, state: 'refused', code, message: redactSecrets(message, secrets) };
  }
}

export const snapshot: Handler = async ({ runtime, body }) => {
  const request = body as SnapshotRequest;
  const secrets = await runtime.secrets();
  const budget: Budget = { left: BACKUP_BUDGET, truncated: false };
  const files: SnapshotFile[] = [];
  for (const path of request.paths) {
    files.push(await snapshotFile(runtime, path, request.backups, secrets, budget));
  }
  const response: SnapshotResponse = { nodeId: runtime.nodeId, files, truncated: budget.truncated };
  return { status: 200, body: response };
};
