/**
 * `POST /v1/snapshot` (core `wire/snapshot.ts`): the config verbs' one read per host — every
 * requested managed file, redacted, with the redacted contents of the backups the node holds of
 * it, newest first, and the node's record of what fleet wrote there (`writes`, `written.ts`). A
 * file that cannot be read safely is answered `refused` with its code; the others are still
 * answered. An unusable record refuses every file (`RECOVERY_REQUIRED`): without it fleet could
 * take a file it wrote for a hand change, or a deleted one for one never installed. Backup contents are bounded per answer (`truncated` says when cut).
 * Requested probers (`probes`) run in the same request, so drift stays one request per host.
 */
import { join } from 'node:path';
import {
  formatFileMode,
  isFleetError,
  type Redactor,
  type SnapshotFile,
  type SnapshotFileRequest,
  type SnapshotProbeResult,
  type SnapshotRequest,
  type SnapshotResponse,
} from '@fleet/core/node';
import { redactorOf } from '../runtime.js';
import { refuseHardLinked } from './files.js';
import { probeAnswer } from './probe-answer.js';
import type { AllowedPath } from '../allowlist.js';
import { backupFileId, listBackups } from '../backups.js';
import { managedTarget } from '../fs/managed-target.js';
import { decodeText, readLive, targetOf, type WalkMemo } from '../fs/safe-path.js';
import type { ControllerRuntime } from '../runtime.js';
import { STATE_DIR } from '../state-paths.js';
import { readWritten, type WrittenRecord } from '../written.js';
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
  redactor: Redactor,
  budget: Budget,
): Promise<{ path: string; sha256: string; content: string }[]> {
  const out: { path: string; sha256: string; content: string }[] = [];
  const names = (await listBackups(runtime.home, join(runtime.state.backups, entry.domain)))
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
        content: redactor.content(decodeText(live.bytes, path)),
      });
    } catch {
      // a backup that is not safe text is left out (inventory still lists it)
    }
  }
  return out;
}

async function snapshotFile(
  runtime: ControllerRuntime,
  { domain, path, mode }: SnapshotFileRequest,
  withBackups: boolean,
  redactor: Redactor,
  budget: Budget,
  written: () => Promise<WrittenRecord>,
  walked: WalkMemo,
): Promise<SnapshotFile> {
  try {
    // The domain is the request's: a domain not served, or a path its policy does not accept,
    // is answered as such (DOMAIN_NOT_SERVED, POLICY_REFUSED), not as an unknown path.
    const entry = runtime.allowlist.require(path, domain);
    const writes = [...((await written()).get(path) ?? [])];
    const target = await managedTarget(runtime.home, path, runtime.allowlist.symlinkDirs);
    const live = await readLive(runtime.home, target, runtime.limits.maxFileBytes, walked);
    const backups = withBackups ? await backupsOf(runtime, entry, redactor, budget) : [];
    if (live === null) return { path, state: 'absent', backups, writes };
    refuseHardLinked(path, live, target.parent);
    const text = decodeText(live.bytes, path);
    const content = redactor.content(text);
    return {
      path,
      state: 'present',
      size: live.size,
      mtime: live.mtime.toISOString(),
      sha256: live.sha256,
      content,
      redacted: content !== text,
      backups,
      writes,
      // Asked for by a files entry with a mode (contract §10.4); Windows has no mode to report.
      ...(mode === true && process.platform !== 'win32' ? { mode: formatFileMode(live.mode) } : {}),
    };
  } catch (error) {
    const code = isFleetError(error) ? error.code : 'IO_ERROR';
    const message = isFleetError(error) ? error.message : 'the file could not be read';
    return { path, state: 'refused', code, message: redactor.annotation(message) };
  }
}

export const snapshot: Handler = async ({ runtime, principal, route, body }) => {
  const request = body as SnapshotRequest;
  const redactor = await redactorOf(runtime);
  const budget: Budget = { left: BACKUP_BUDGET, truncated: false };
  // Read once per request, and only once a path passed the allowlist.
  let record: Promise<WrittenRecord> | undefined;
  const written = () => (record ??= readWritten(runtime.state));
  const files: SnapshotFile[] = [];
  // Each directory walked once for the request's files; each file's own checks still run.
  const walked: WalkMemo = new Map();
  for (const file of request.files) {
    files.push(
      await snapshotFile(runtime, file, request.backups, redactor, budget, written, walked),
    );
  }
  const response: SnapshotResponse = { nodeId: runtime.nodeId, files, truncated: budget.truncated };
  if (request.probes !== undefined) {
    const probes: SnapshotProbeResult[] = [];
    for (const probe of request.probes) {
      probes.push(await probeAnswer({ runtime, principal, route }, probe, redactor));
    }
    return { status: 200, body: { ...response, probes } satisfies SnapshotResponse };
  }
  return { status: 200, body: response };
};
