/**
 * The controller's `SafeFileWriter` (core `interfaces/installer.ts`), one per operation. A
 * `replace` is the whole recoverable write of contract §8.4, in order: allowlist and lock; the live
 * sha256 compared with the expected one (`PRECONDITION_FAILED` carrying the live sha; equal
 * content writes nothing); the target's directory writable; a backup (0600, O_EXCL, in the 0700
 * backup directory); a temp file created O_EXCL with mode 0600 in the target's own directory,
 * written, chmod'ed to the requested mode (a files entry's `mode`, contract §10.4) or else the
 * target's, and fsync'd — an explicit fchmod, so the umask never decides a mode; the caller's token re-checked; the parents
 * and the live sha re-checked; the swap (the checked inode linked aside, the rename, the old inode
 * verified: `swapIn`); the directory fsync. Every step is journaled first, so a crash anywhere
 * leaves a file that is wholly old or wholly new and a journal that says which step was reached
 * (docs/durability.md).
 *
 * After the rename the content's sha256 is added to the node's record of fleet's own writes
 * (`written.ts`, contract §8.2); a restore withdraws the write it undoes and records nothing.
 *
 * Linux has no compare-and-swap rename (catalogue 31): link-swap-verify catches another writer in
 * the window after the last check, and what it cannot catch is listed in docs/durability.md.
 *
 * The steps stay in one class, one method each, because they share the operation's state (its
 * sequence of temp names, what it wrote). The temp file and the swap, which share only the
 * sequence, are in the `TempSwap` it holds (temp-swap.ts); what needs none of it — the options
 * and the written files (writer-types.ts), the kept attributes (fs/attributes.ts), the swap's
 * links (fs/link-swap.ts) — lives beside it.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import {
  FleetError,
  formatFileMode,
  type ReplaceRequest,
  type ReplaceResult,
  type SafeFileWriter,
} from '@fleet/core/node';
import { writeBackup } from './backups.js';
import { failpoint } from './failpoints.js';
import { fsyncDir } from './fs/durable.js';
import { fsFailure } from './fs/errors.js';
import { rename, unlink } from './fs/seam.js';
import {
  readLive,
  recheckParents,
  sha256Hex,
  walkParents,
  type LiveFile,
  type Target,
} from './fs/safe-path.js';
import { managedTarget } from './fs/managed-target.js';
import { homeRelative } from './state-paths.js';
import { forgetWrite, recordWrite } from './written.js';
import { keptAttributes, ownAttributes, type Attributes } from './fs/attributes.js';
import { TempSwap, preconditionFailed } from './temp-swap.js';
import type { WriterOptions, WrittenFile } from './writer-types.js';

/** What `replace` learned before writing anything: its checked target and live file. */
interface ReplacePlan {
  readonly request: ReplaceRequest;
  readonly fileId: string;
  readonly target: Target;
  readonly live: LiveFile | null;
  readonly liveSha: string | null;
  readonly afterSha: string;
  /** The mode asked for, `undefined` when none was or on Windows. */
  readonly wantedMode: number | undefined;
  readonly modeChange: WrittenFile['modeChange'];
}

export class OperationWriter implements SafeFileWriter {
  readonly written: WrittenFile[] = [];
  private readonly temps: TempSwap;

  constructor(private readonly options: WriterOptions) {
    this.temps = new TempSwap(options);
  }

  /**
   * The live bytes of one of this domain's files, read through the same checks as a write (the
   * allowlist, no symlinked component, nothing outside the home, the size bound).
   */
  async read(path: string): Promise<{ content: Uint8Array; sha256: string } | null> {
    const { home, domain, allowlist, fileLimit } = this.options;
    allowlist.require(path, domain);
    const live = await readLive(
      home,
      await managedTarget(home, path, allowlist.symlinkDirs),
      fileLimit,
    );
    return live === null ? null : { content: live.bytes, sha256: live.sha256 };
  }

  /** The recoverable write of contract §8.4, step by step in the order the module comment gives. */
  async replace(request: ReplaceRequest): Promise<ReplaceResult> {
    const plan = await this.plan(request);
    const { live, liveSha, afterSha, modeChange } = plan;
    // Equal content with another mode is a change like any other: backup, temp file, rename.
    if (live !== null && liveSha === afterSha && modeChange?.before === modeChange?.after) {
      return this.keepUnchanged(plan, live);
    }
    const attributes = live === null ? null : keptAttributes(request.path, live);
    const backup = await this.backUp(plan);
    const backupPath = backup === null ? null : homeRelative(this.options.home, backup);
    const mode = attributes?.mode ?? 0o600;
    const kept = attributes ?? ownAttributes();
    const writtenMode = plan.wantedMode ?? kept.mode;
    await this.commitTemp(plan, backup, backupPath, { ...kept, mode: writtenMode });
    const result = {
      path: request.path,
      beforeSha256: liveSha,
      afterSha256: afterSha,
      backupPath,
      unchanged: false,
    };
    this.written.push({
      fileId: plan.fileId,
      result,
      before: live?.bytes ?? null,
      after: request.content,
      mode,
      ...(modeChange === undefined ? {} : { modeChange }),
      hardlinkBroken: live !== null && live.nlink > 1,
      restored: false,
    });
    await this.afterRename(plan, writtenMode);
    return result;
  }

  /**
   * The checks before anything is written: the allowlist, the size bound, the path's lock, the
   * parents, and the live sha256 against the one planned against (`PRECONDITION_FAILED`).
   */
  private async plan(request: ReplaceRequest): Promise<ReplacePlan> {
    const { home, operationId, domain, allowlist, locks, fileLimit } = this.options;
    const entry = allowlist.require(request.path, domain);
    if (request.content.length > fileLimit) {
      throw new FleetError(
        'FILE_TOO_LARGE',
        `${request.path}: ${request.content.length} bytes, over the ${fileLimit}-byte bound`,
      );
    }
    if (!locks.holds(request.path, operationId)) locks.acquire([request.path], operationId);
    // A managed file linked into a directory the policy lists is written at its target.
    const target = await managedTarget(home, request.path, allowlist.symlinkDirs);
    await walkParents(home, target, { create: request.expectedSha256 === null });
    const live = await readLive(home, target, fileLimit);
    const liveSha = live?.sha256 ?? null;
    if (liveSha !== request.expectedSha256) throw preconditionFailed(request.path, liveSha);

    // No mode on Windows (contract §10.4): a requested one is ignored there, never half-applied.
    const wantedMode = process.platform === 'win32' ? undefined : request.mode;
    const modeChange =
      wantedMode === undefined
        ? undefined
        : { before: live === null ? null : live.mode & 0o7777, after: wantedMode };
    return {
      request,
      fileId: entry.fileId,
      target,
      live,
      liveSha,
      afterSha: sha256Hex(request.content),
      wantedMode,
      modeChange,
    };
  }

  /** The same content and mode are already in place: nothing is written, the write is recorded. */
  private keepUnchanged(plan: ReplacePlan, live: LiveFile): ReplaceResult {
    const { request, modeChange } = plan;
    const result = {
      path: request.path,
      beforeSha256: live.sha256,
      afterSha256: plan.afterSha,
      backupPath: null,
      unchanged: true,
    };
    this.written.push({
      fileId: plan.fileId,
      result,
      before: live.bytes,
      after: request.content,
      mode: live.mode,
      ...(modeChange === undefined ? {} : { modeChange }),
      hardlinkBroken: false,
      restored: false,
    });
    return result;
  }

  /** The backup of the live file (none for a created one); its absolute path. */
  private async backUp(plan: ReplacePlan): Promise<string | null> {
    const { home, operationId, domain } = this.options;
    const { request, target, live } = plan;
    // A directory the temp file cannot be made in (a read-only mount, no write permission) fails
    // here, before a backup is written for a write that cannot happen (catalogue 20).
    await access(target.parent, constants.W_OK).catch((error: unknown) => {
      throw fsFailure(error, request.path);
    });
    await failpoint('install.before_backup');
    return live === null
      ? null
      : await writeBackup(home, join(this.options.state.backups, domain), {
          fileId: plan.fileId,
          operationId,
          now: this.options.clock.now(),
          bytes: live.bytes,
        });
  }

  /**
   * From the journaled intent to the rename: the temp file written and fsync'd, the token and the
   * live content checked a last time, the swap. A failure removes the temp file and the backup.
   */
  private async commitTemp(
    plan: ReplacePlan,
    backup: string | null,
    backupPath: string | null,
    attributes: Attributes,
  ): Promise<void> {
    const { request, target, live } = plan;
    let temp: string | undefined;
    try {
      // From here to the rename, a failure removes the backup of a write that never happened
      // (disk full, fsync EIO: catalogue 25, 26): an orphan would count against the domain's
      // retention and push a real one out.
      await this.options.operations.note(this.options.operationId, {
        event: 'write',
        path: request.path,
        beforeSha256: plan.liveSha,
        afterSha256: plan.afterSha,
        backupPath,
      });
      await this.options.retain?.([
        { path: request.path, bytes: request.content },
        ...(backupPath === null || live === null ? [] : [{ path: backupPath, bytes: live.bytes }]),
      ]);
      await failpoint('install.after_backup');
      temp = await this.temps.writeTemp(target, request.content, attributes);
      await failpoint('install.after_temp_write');
      // A domain's validate action sees the new bytes where they will live, before they replace
      // the old (docs/plugin-authoring.md §7): a refusal leaves the live file as it was.
      if (request.beforeRename !== undefined) await request.beforeRename(temp);
      await this.options.beforeCommit();
      const again = await this.recheck(plan);
      await this.temps.swapIn(temp, target, again);
    } catch (error) {
      if (temp !== undefined) await unlink(temp).catch(() => undefined);
      if (backup !== null) await unlink(backup).catch(() => undefined);
      throw fsFailure(error, request.path);
    }
  }

  /** Last checks before the irreversible step: same real parents, same live content. */
  private async recheck(plan: ReplacePlan): Promise<LiveFile | null> {
    const { home, fileLimit } = this.options;
    const { request, target, liveSha } = plan;
    const again = await readLive(home, target, fileLimit);
    if ((again?.sha256 ?? null) !== liveSha) {
      throw preconditionFailed(request.path, again?.sha256 ?? null, 'changed during the install');
    }
    if (again !== null) await recheckParents(home, again.chain);
    else await recheckParents(home, await walkParents(home, target, { create: false }));
    return again;
  }

  /** The rename made durable (the directory fsync), journaled, and recorded as fleet's write. */
  private async afterRename(plan: ReplacePlan, writtenMode: number): Promise<void> {
    const { operationId } = this.options;
    const { request, target } = plan;
    await fsyncDir(target.parent, request.path);
    await this.options.operations.note(operationId, { event: 'renamed', path: request.path });
    await recordWrite(this.options.state, request.path, {
      sha256: plan.afterSha,
      at: this.options.clock.now().toISOString(),
      operationId,
      // What a hand chmod is told from (contract §10.4); Windows has no mode to record.
      ...(process.platform === 'win32' ? {} : { mode: formatFileMode(writtenMode) }),
    });
    await failpoint('install.after_rename');
  }

  /** Puts back what `replace` replaced (from the bytes it backed up), or removes what it created. */
  async restore(result: ReplaceResult): Promise<void> {
    const written = this.written.find(
      (w) =>
        w.result === result ||
        (w.result.path === result.path && w.result.afterSha256 === result.afterSha256),
    );
    if (!written || written.restored || written.result.unchanged) return;
    const { home, operationId, fileLimit, allowlist } = this.options;
    const target = await managedTarget(home, result.path, allowlist.symlinkDirs);
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
        const temp = await this.temps.writeTemp(
          target,
          written.before,
          { ...ownAttributes(), ...(live === null ? {} : { uid: live.uid, gid: live.gid }) },
          'r',
          written.mode,
        );
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
}
