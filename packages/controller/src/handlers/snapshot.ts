/**
 * `POST /v1/snapshot` (core `wire/snapshot.ts`): the config verbs' one read per host — every
 * requested managed file, redacted, with the redacted contents of the backups the node holds of
 * it, newest first, and the node's record of what fleet wrote there (`writes`, `written.ts`). A
 * file that cannot be read safely is answered `refused` with its code; the others are still
 * answered. An unusable record refuses every file (`RECOVERY_REQUIRED`): without it fleet could
 * take a file it wrote for a hand change, or a deleted one for one never installed. Backup contents are bounded per answer (`truncated` says when cut).
 * Requested probers (`probes`) run in the same request, so drift stays one request per host.
 * The files and the probers' reads go through one {@link ReadSession}: each directory walked and
 * re-checked once, each file read once, for the whole request (contract §14).
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
import { probeAnswer, probeFailed } from './probe-answer.js';
import type { AllowedPath } from '../allowlist.js';
import { isBackupOf, listBackups } from '../backups.js';
import { managedTarget } from '../fs/managed-target.js';
import { ReadSession, decodeText, readLive, targetOf } from '../fs/safe-path.js';
import type { ControllerRuntime } from '../runtime.js';
import { STATE_DIR } from '../state-paths.js';
import { readRuntimeSummary } from '../lifecycle/summary.js';
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
    .filter((backup) => isBackupOf(backup.parsed.fileId, entry.fileId))
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

/** One file's answer, and where its bytes were read (for the request's final re-check). */
interface FileAnswer {
  readonly answer: SnapshotFile;
  readonly absolute?: string;
}

function refusedFile(path: string, error: unknown, redactor: Redactor): SnapshotFile {
  const code = isFleetError(error) ? error.code : 'IO_ERROR';
  const message = isFleetError(error) ? error.message : 'the file could not be read';
  return { path, state: 'refused', code, message: redactor.annotation(message) };
}

async function snapshotFile(
  runtime: ControllerRuntime,
  { domain, path, mode, bytes }: SnapshotFileRequest,
  withBackups: boolean,
  redactor: Redactor,
  budget: Budget,
  written: () => Promise<WrittenRecord>,
  session: ReadSession,
): Promise<FileAnswer> {
  try {
    // The domain is the request's: a domain not served, or a path its policy does not accept,
    // is answered as such (DOMAIN_NOT_SERVED, POLICY_REFUSED), not as an unknown path.
    const entry = runtime.allowlist.require(path, domain);
    const writes = [...((await written()).get(path) ?? [])];
    const target = await managedTarget(runtime.home, path, runtime.allowlist.symlinkDirs);
    const live = await session.read(target);
    const backups = withBackups ? await backupsOf(runtime, entry, redactor, budget) : [];
    if (live === null) return { answer: { path, state: 'absent', backups, writes } };
    refuseHardLinked(path, live, target.parent);
    const common = {
      path,
      state: 'present' as const,
      size: live.size,
      mtime: live.mtime.toISOString(),
      sha256: live.sha256,
      backups,
      writes,
      // Asked for by a files entry with a mode (contract §10.4); Windows has no mode to report.
      ...(mode === true && process.platform !== 'win32' ? { mode: formatFileMode(live.mode) } : {}),
    };
    // A files entry whose source is bytes compares by sha256: a live file that is not text is
    // answered so (`binary`), its bytes never sent (contract §10.4).
    const text = bytes === true ? textOrNull(live.bytes, path) : decodeText(live.bytes, path);
    if (text === null) {
      return {
        absolute: target.absolute,
        answer: { ...common, content: '', redacted: false, binary: true },
      };
    }
    const content = redactor.content(text);
    // Names only (contract §15): drift shows a rotation that has not reached this file.
    const rotatedSecrets = redactor.rotatedIn(text);
    return {
      absolute: target.absolute,
      answer: {
        ...common,
        content,
        redacted: content !== text,
        ...(rotatedSecrets.length === 0 ? {} : { rotatedSecrets }),
      },
    };
  } catch (error) {
    return { answer: refusedFile(path, error, redactor) };
  }
}

/** A file's text, or `null` when it is not UTF-8 text (binary, or not UTF-8). */
function textOrNull(bytes: Uint8Array, path: string): string | null {
  try {
    return decodeText(bytes, path);
  } catch (error) {
    if (isFleetError(error) && ['FORMAT_UNSUPPORTED', 'ENCODING_INVALID'].includes(error.code)) {
      return null;
    }
    throw error;
  }
}

export const snapshot: Handler = async ({ runtime, principal, route, body }) => {
  const request = body as SnapshotRequest;
  const redactor = await redactorOf(runtime);
  const budget: Budget = { left: BACKUP_BUDGET, truncated: false };
  // Read once per request, and only once a path passed the allowlist.
  let record: Promise<WrittenRecord> | undefined;
  const written = () => (record ??= readWritten(runtime.state));
  const session = new ReadSession(runtime.home, runtime.limits.maxFileBytes);
  const files: FileAnswer[] = [];
  for (const file of request.files) {
    files.push(
      await snapshotFile(runtime, file, request.backups, redactor, budget, written, session),
    );
  }
  const probes: { answer: SnapshotProbeResult; read: Set<string> }[] = [];
  for (const probe of request.probes ?? []) {
    const within = { session, read: new Set<string>() };
    const answer = await probeAnswer(
      { runtime, principal, route },
      probe,
      redactor,
      undefined,
      within,
    );
    probes.push({ answer, read: within.read });
  }
  // Every directory the request walked, re-checked once after its last read: a file read under
  // one that changed is refused, and so is a prober that read such a file (ReadSession).
  const refused = await session.recheck();
  const refusal = (absolute: string | undefined) =>
    absolute === undefined ? undefined : refused.get(absolute);
  const response: SnapshotResponse = {
    nodeId: runtime.nodeId,
    files: files.map(({ answer, absolute }) => {
      const error = refusal(absolute);
      return error === undefined ? answer : refusedFile(answer.path, error, redactor);
    }),
    truncated: budget.truncated,
    ...(request.runtime === true ? { runtime: await readRuntimeSummary(runtime.home) } : {}),
  };
  if (request.probes === undefined) return { status: 200, body: response };
  const answers = probes.map(({ answer, read }) => {
    const error = [...read].map(refusal).find((e) => e !== undefined);
    return error === undefined ? answer : probeFailed(answer.prober, error, redactor);
  });
  return { status: 200, body: { ...response, probes: answers } satisfies SnapshotResponse };
};
