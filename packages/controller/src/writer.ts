/**
 * The controller's `SafeFileWriter` (core `interfaces/installer.ts`), one per operation. A
 * `replace` is the whole recoverable write of contract §8.4, in order: allowlist and lock; the live
 * sha256 compared with the expected one (`PRECONDITION_FAILED` carrying the live sha; equal
 * content writes nothing); a backup (0600, O_EXCL, in the 0700 backup directory); a temp file
 * created O_EXCL with mode 0600 in the target's own directory, written, chmod'ed to the target's
 * mode and fsync'd; the caller's token re-checked; the parents and the live sha re-checked; the
 * rename; the directory fsync. Every step is journaled first, so a crash anywhere leaves a file
 * that is wholly old or wholly new and a journal that says which step was reached.
 *
 * After the rename the content's sha256 is added to the node's record of fleet's own writes
 * (`written.ts`, contract §8.2); a restore withdraws the write it undoes and records nothing.
 *
 * The window between the last live-sha check and the rename is not closed: Linux has no
 * compare-and-swap rename (catalogue 31). An external writer that lands in it is overwritten; the
 * backup taken at check time and the receipt let the operator see and undo it.
 */
import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import {
  FleetError,
  type Clock,
  type ReplaceRequest,
  type ReplaceResult,
  type SafeFileWriter,
} from '@fleet/core';
import type { Allowlist } from './allowlist.js';
import { writeBackup } from './backups.js';
import { failpoint } from './failpoints.js';
import { fsyncDir, syncHandle } from './fs/durable.js';
import { fsFailure } from './fs/errors.js';
import {
  readLive,
  recheckParents,
  sha256Hex,
  targetOf,
  walkParents,
  type Target,
} from './fs/safe-path.js';
import type { PathLocks } from './locks.js';
import type { OperationStore } from './operations.js';
import { TEMP_PREFIX, homeRelative, type StatePaths } from './state-paths.js';
import { forgetWrite, recordWrite } from './written.js';

export interface WriterOptions {
  readonly home: string;
  readonly state: StatePaths;
  readonly operationId: string;
  readonly domain: string;
  readonly allowlist: Allowlist;
  readonly locks: PathLocks;
  readonly operations: OperationStore;
  readonly clock: Clock;
  readonly fileLimit: number;
  /** Runs right before each rename: re-checks the caller's token (`AUTH_REVOKED` aborts). */
  readonly beforeCommit: () => Promise<void>;
}

/** One `replace` this writer did, with what a receipt and a restore need. */
export interface WrittenFile {
  readonly fileId: string;
  readonly result: ReplaceResult;
  readonly before: Buffer | null;
  readonly after: Uint8Array;
  readonly mode: number;
  restored: boolean;
}

const CREATE_TEMP =
  constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0);

export class OperationWriter implements SafeFileWriter {
  readonly written: WrittenFile[] = [];
  private seq = 0;

  constructor(private readonly options: WriterOptions) {}

  /**
   * The live bytes of one of this domain's files, read through the same checks as a write (the
   * allowlist, no symlinked component, nothing outside the home, the size bound).
   */
  async read(path: string): Promise<{ content: Uint8Array; sha256: string } | null> {
    const { home, domain, allowlist, fileLimit } = this.options;
    allowlist.require(path, domain);
    const live = await readLive(home, targetOf(home, path), fileLimit);
    return live === null ? null : { content: live.bytes, sha256: live.sha256 };
  }

  async replace(request: ReplaceRequest): Promise<ReplaceResult> {
    const { home, operationId, domain, allowlist, locks, fileLimit } = this.options;
    const entry = allowlist.require(request.path, domain);
    if (request.content.length > fileLimit) {
      throw new FleetError(
        'FILE_TOO_LARGE',
        `${request.path}: ${request.content.length} bytes, over the ${fileLimit}-byte bound`,
      );
    }
    if (!locks.holds(request.path, operationId)) locks.acquire([request.path], operationId);
    const target = targetOf(home, request.path);
    await walkParents(home, target, { create: request.expectedSha256 === null });
    const live = await readLive(home, target, fileLimit);
    const liveSha = live?.sha256 ?? null;
    if (liveSha !== request.expectedSha256) throw preconditionFailed(request.path, liveSha);

    const afterSha = sha256Hex(request.content);
    if (live !== null && liveSha === afterSha) {
      const result = {
        path: request.path,
        beforeSha256: liveSha,
        afterSha256: afterSha,
        backupPath: null,
        unchanged: true,
      };
      this.written.push({
        fileId: entry.fileId,
        result,
        before: live.bytes,
        after: request.content,
        mode: live.mode,
        restored: false,
      });
      return result;
    }

    await failpoint('install.before_backup');
    const backup =
      live === null
        ? null
        : await writeBackup(join(this.options.state.backups, domain), {
            fileId: entry.fileId,
            operationId,
            now: this.options.clock.now(),
            bytes: live.bytes,
          });
    const backupPath = backup === null ? null : homeRelative(home, backup);
    await this.options.operations.note(operationId, {
      event: 'write',
      path: request.path,
      beforeSha256: liveSha,
      afterSha256: afterSha,
      backupPath,
    });
    await failpoint('install.after_backup');

    const mode = live === null ? 0o600 : live.mode & 0o777;
    const temp = await this.writeTemp(target, request.content, mode);
    try {
      await failpoint('install.after_temp_write');
      await this.options.beforeCommit();
      await failpoint('install.before_rename');
      // Last checks before the irreversible step: same real parents, same live content.
      const again = await readLive(home, target, fileLimit);
      if ((again?.sha256 ?? null) !== liveSha) {
        throw preconditionFailed(request.path, again?.sha256 ?? null, 'changed during the install');
      }
      if (again !== null) await recheckParents(home, again.chain);
      else await recheckParents(home, await walkParents(home, target, { create: false }));
      await rename(temp, target.absolute);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      if (backup !== null) await unlink(backup).catch(() => undefined);
      throw fsFailure(error, request.path);
    }
    const result = {
      path: request.path,
      beforeSha256: liveSha,
      afterSha256: afterSha,
      backupPath,
      unchanged: false,
    };
    this.written.push({
      fileId: entry.fileId,
      result,
      before: live?.bytes ?? null,
      after: request.content,
      mode,
      restored: false,
    });
    await fsyncDir(target.parent, request.path);
    await this.options.operations.note(operationId, { event: 'renamed', path: request.path });
    await recordWrite(this.options.state, request.path, {
      sha256: afterSha,
      at: this.options.clock.now().toISOString(),
      operationId,
    });
    await failpoint('install.after_rename');
    return result;
  }

  /** Puts back what `replace` replaced (from the bytes it backed up), or removes what it created. */
  async restore(result: ReplaceResult): Promise<void> {
    const written = this.written.find(
      (w) =>
        w.result === result ||
        (w.result.path === result.path && w.result.afterSha256 === result.afterSha256),
    );
    if (!written || written.restored || written.result.unchanged) return;
    const { home, operationId, fileLimit } = this.options;
    const target = targetOf(home, result.path);
    const live = await readLive(home, target, fileLimit);
    if ((live?.sha256 ?? null) !== written.result.afterSha256) {
      throw new FleetError(
        'RECOVERY_REQUIRED',
        `${result.path} changed after the install wrote it; not restored automatically (backup: ${written.result.backupPath ?? 'none'})`,
      );
    }
    try {
      if (written.before === null) {
        await unlink(target.absolute);
      } else {
        const temp = await this.writeTemp(target, written.before, written.mode, 'r');
        try {
          await rename(temp, target.absolute);
        } catch (error) {
          await unlink(temp).catch(() => undefined);
          throw error;
        }
      }
    } catch (error) {
      throw fsFailure(error, result.path);
    }
    await fsyncDir(target.parent, result.path);
    written.restored = true;
    await this.options.operations.note(operationId, { event: 'restored', path: result.path });
    // The file is back: a record that cannot be updated must not make the restore fail. Left
    // behind, the withdrawn write only errs on the safe side (a file removed again reads
    // `deleted`: never recreated without --force), and an unusable record refuses every read.
    await forgetWrite(this.options.state, result.path, operationId).catch(() => undefined);
  }

  /** Every written file not restored yet, newest first. */
  unrestored(): WrittenFile[] {
    return this.written.filter((w) => !w.result.unchanged && !w.restored).reverse();
  }

  private async writeTemp(
    target: Target,
    content: Uint8Array,
    mode: number,
    tag = '',
  ): Promise<string> {
    const temp = join(
      target.parent,
      `${TEMP_PREFIX}${this.options.operationId}-${tag}${this.seq++}`,
    );
    let handle: FileHandle | undefined;
    try {
      handle = await open(temp, CREATE_TEMP, 0o600);
      await handle.writeFile(content);
      if (mode !== 0o600) await handle.chmod(mode);
      await syncHandle(handle, target.path);
      await handle.close();
      handle = undefined;
      return temp;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw fsFailure(error, target.path);
    }
  }
}

/** `PRECONDITION_FAILED`, carrying the live sha256 (`null`: the file does not exist). */
export function preconditionFailed(path: string, liveSha: string | null, why = ''): FleetError {
  const error = new FleetError(
    'PRECONDITION_FAILED',
    `${path}${why ? ` ${why}` : ''}: live sha256 is ${liveSha ?? 'absent (no such file)'}, not the one planned against; nothing written`,
    { suggestions: ['re-plan against the live file'] },
  );
  return Object.assign(error, { liveSha256: liveSha, path });
}
