/**
 * Reads of managed files (contract §9): `inventory` (every allowlisted file and its backups: size,
 * mtime, sha256, format), `export` (one file, redacted, bounded, fail-closed on binary and
 * non-UTF-8 content) and `capture` (an export for adopt, audited under the operator's id).
 */
import { join } from 'node:path';
import {
  FleetError,
  isFleetError,
  type CaptureRequest,
  type CaptureResponse,
  type ExportRequest,
  type ExportResponse,
  type InventoryBackup,
  type InventoryFile,
  type InventoryResponse,
} from '@fleet/core/node';
import type { AllowedPath } from '../allowlist.js';
import { isBackupOf, listBackups } from '../backups.js';
import { managedTarget } from '../fs/managed-target.js';
import { decodeText, readLive, sha256Hex, targetOf } from '../fs/safe-path.js';
import { STATE_DIR } from '../state-paths.js';
import { buildLabel, redactorOf, type ControllerRuntime } from '../runtime.js';
import { keptLinks } from '../fs/link-swap.js';
import { readWritten } from '../written.js';
import { checkFreshOperationId, claimRefused } from './replay.js';
import type { Handler } from './types.js';

function describe(error: unknown): { code: string; message: string } {
  if (isFleetError(error)) return { code: error.code, message: error.message };
  return { code: 'IO_ERROR', message: 'the file could not be read' };
}

/**
 * Every file the node can name: the paths the domains declare, and the repository-declared files
 * (the files domain's, contract §10.4) fleet wrote here — the node holds no manifest, its record of
 * fleet's writes is what it knows of them.
 */
async function knownEntries(runtime: ControllerRuntime): Promise<AllowedPath[]> {
  // A record that cannot be read lists what the domains declare (the snapshot says what is wrong).
  const written = await readWritten(runtime.state).catch(() => new Map<string, unknown>());
  return [...runtime.allowlist.all(), ...runtime.allowlist.repoDeclaredAmong(written.keys())];
}

async function inventoryFiles(
  runtime: ControllerRuntime,
  entries: readonly AllowedPath[],
): Promise<InventoryFile[]> {
  const out: InventoryFile[] = [];
  for (const entry of entries) {
    const base = {
      domain: entry.domain,
      fileId: entry.fileId,
      path: entry.path,
      kind: entry.kind,
      format: entry.format,
    };
    try {
      const live = await readLive(
        runtime.home,
        await managedTarget(runtime.home, entry.path, runtime.allowlist.symlinkDirs),
        runtime.limits.maxFileBytes,
      );
      if (live === null) {
        out.push({ ...base, exists: false });
        continue;
      }
      const fields = {
        ...base,
        exists: true,
        size: live.size,
        mtime: live.mtime.toISOString(),
        sha256: live.sha256,
      };
      try {
        decodeText(live.bytes, entry.path);
        out.push(fields);
      } catch (error) {
        out.push({ ...fields, error: describe(error) });
      }
    } catch (error) {
      out.push({ ...base, exists: true, error: describe(error) });
    }
  }
  return out;
}

async function inventoryBackups(
  runtime: ControllerRuntime,
  entries: readonly AllowedPath[],
): Promise<{ backups: InventoryBackup[]; truncated: boolean }> {
  const backups: InventoryBackup[] = [];
  for (const domain of [...new Set(entries.map((entry) => entry.domain))]) {
    for (const { name, parsed } of await listBackups(
      runtime.home,
      join(runtime.state.backups, domain),
    )) {
      const of = entries.find(
        (entry) => entry.domain === domain && isBackupOf(parsed.fileId, entry.fileId),
      );
      if (!of) continue;
      if (backups.length >= runtime.limits.maxInventoryBackups) return { backups, truncated: true };
      const path = `~/${STATE_DIR}/backups/${domain}/${name}`;
      try {
        const live = await readLive(
          runtime.home,
          targetOf(runtime.home, path),
          runtime.limits.maxFileBytes,
        );
        if (live === null) continue;
        backups.push({
          domain,
          fileId: of.fileId,
          of: of.path,
          path,
          size: live.size,
          mtime: live.mtime.toISOString(),
          sha256: live.sha256,
        });
      } catch {
        // a backup that cannot be read safely is left out, never followed
      }
    }
  }
  return { backups, truncated: false };
}

export const inventory: Handler = async ({ runtime }) => {
  const entries = await knownEntries(runtime);
  const { backups, truncated } = await inventoryBackups(runtime, entries);
  const body: InventoryResponse = {
    nodeId: runtime.nodeId,
    generatedAt: runtime.clock.now().toISOString(),
    files: await inventoryFiles(runtime, entries),
    backups,
    truncated,
  };
  return { status: 200, body };
};

/**
 * A file with more than one hard link is refused for reading out (catalogue 16): its inode is
 * also reachable under a name the allowlist never approved (`ln ~/.ssh/id_ed25519 <managed>`),
 * so its content is not the managed file's to give. An install's own kept link beside it (the
 * swap of catalogue 31, for the moment of a rename) is not another file.
 */
export function refuseHardLinked(
  path: string,
  live: { readonly nlink: number; readonly ino: number },
  dir: string,
): void {
  if (live.nlink > 1 && live.nlink - keptLinks(dir, live.ino) > 1) {
    throw new FleetError(
      'HARDLINK_REFUSED',
      `${path} has ${live.nlink} hard links: its content is also another file's; not read out (an install replaces it and breaks the link)`,
    );
  }
}

/** One readable file, redacted: what export and capture share. */
async function readRedacted(runtime: ControllerRuntime, path: string, capture: boolean) {
  const entry = capture
    ? runtime.allowlist.require(path)
    : runtime.allowlist.requireReadable(
        path,
        (await readWritten(runtime.state).catch(() => new Map<string, unknown>())).keys(),
      );
  const target =
    entry.kind === 'backup'
      ? targetOf(runtime.home, path)
      : await managedTarget(runtime.home, path, runtime.allowlist.symlinkDirs);
  const live = await readLive(runtime.home, target, runtime.limits.maxFileBytes);
  if (live === null) return { entry, live: null, content: '', redacted: false };
  refuseHardLinked(path, live, target.parent);
  const text = decodeText(live.bytes, path);
  const content = (await redactorOf(runtime)).content(text);
  return { entry, live, content, redacted: content !== text };
}

export const exportFile: Handler = async ({ runtime, body }) => {
  const { path } = body as ExportRequest;
  const { entry, live, content, redacted } = await readRedacted(runtime, path, false);
  const common = {
    path,
    domain: entry.domain,
    fileId: entry.fileId,
    kind: entry.kind,
    format: entry.format,
  };
  const response: ExportResponse =
    live === null
      ? { ...common, exists: false }
      : {
          ...common,
          exists: true,
          size: live.size,
          mtime: live.mtime.toISOString(),
          sha256: live.sha256,
          content,
          redacted,
        };
  return { status: 200, body: response };
};

export const capture: Handler = async ({ runtime, principal, body }) => {
  const request = body as CaptureRequest;
  const requestSha256 = sha256Hex(Buffer.from(JSON.stringify(request)));
  const startedAt = runtime.clock.now().toISOString();
  let read: Awaited<ReturnType<typeof readRedacted>>;
  try {
    await checkFreshOperationId(runtime, request.operationId);
    read = await readRedacted(runtime, request.path, true);
    if (read.live === null)
      throw new FleetError('FILE_NOT_FOUND', `${request.path} does not exist on this node`);
  } catch (error) {
    const claim = { operationId: request.operationId, operation: 'capture' as const };
    await claimRefused(
      runtime,
      { ...claim, requestSha256, client: principal.id, startedAt },
      error,
    );
    throw error;
  }
  const { entry, content, redacted } = read;
  const live = read.live;
  await runtime.operations.begin({
    event: 'begin',
    operationId: request.operationId,
    operation: 'capture',
    domain: entry.domain,
    client: principal.id,
    paths: [request.path],
    startedAt,
  });
  try {
    await runtime.audit.append({
      operationId: request.operationId,
      client: principal.id,
      operation: 'capture',
      paths: [request.path],
      files: [
        { path: request.path, beforeSha256: live.sha256, afterSha256: null, backupPath: null },
      ],
      outcome: 'ok',
      code: null,
      detail: `captured ${live.size} bytes${redacted ? ', secrets redacted' : ''}`,
    });
  } catch (error) {
    await runtime.operations.dropJournal(request.operationId);
    throw error;
  }
  const finishedAt = runtime.clock.now().toISOString();
  await runtime.operations.finish({
    operationId: request.operationId,
    operation: 'capture',
    state: 'completed',
    startedAt,
    finishedAt,
    requestSha256,
    client: principal.id,
    httpStatus: 200,
  });
  const response: CaptureResponse = {
    operationId: request.operationId,
    host: runtime.nodeId,
    domain: entry.domain,
    fileId: entry.fileId,
    path: request.path,
    sha256: live.sha256,
    content,
    redacted,
    controller: buildLabel(runtime),
    capturedAt: finishedAt,
  };
  return { status: 200, body: response, audited: true };
};
