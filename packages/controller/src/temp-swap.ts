/**
 * The temp file and the swap of a write (`OperationWriter`, writer.ts): the two steps that put
 * names beside the target. `writeTemp` creates `.fleet-tmp-<operation id>-<n>` O_EXCL with mode
 * 0600 in the target's own directory, writes it, gives it its owner and then its mode explicitly
 * (the umask never decides a mode) and fsyncs it; `swapIn` renames it over the target by
 * link-swap-verify (catalogue 31; docs/durability.md). Both draw their names from the operation's
 * one sequence, so they sit in `TempSwap`, which the writer holds one of per operation.
 * `preconditionFailed` is here because the swap raises it.
 */
import { constants, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { PreconditionFailedError, type FleetError } from '@fleet/core/node';
import { failpoint } from './failpoints.js';
import { fsyncDir, syncHandle } from './fs/durable.js';
import { fsFailure } from './fs/errors.js';
import { open, rename, unlink, type DurableHandle } from './fs/seam.js';
import { readLive, type LiveFile, type Target } from './fs/safe-path.js';
import { TEMP_PREFIX } from './state-paths.js';
import { processIdentity, type Attributes } from './fs/attributes.js';
import { beside, hardLink } from './fs/link-swap.js';

/** What the temp file and the swap read of the writer's options (`WriterOptions`, writer.ts). */
export interface TempSwapOptions {
  readonly home: string;
  readonly operationId: string;
  readonly fileLimit: number;
}

const CREATE_TEMP =
  constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0);

/** An operation's temp files and their swap into place; `OperationWriter` (writer.ts) holds one. */
export class TempSwap {
  private seq = 0;

  constructor(private readonly options: TempSwapOptions) {}

  /**
   * The rename, with what can be closed of the window after the final check closed (catalogue 31;
   * docs/durability.md). A replaced file's checked inode is linked aside first: an in-place write
   * from then on lands in it and shows when it is hashed after the rename, and a replace by rename
   * shows in the inode check right before it. Either way the other writer's file is put back and
   * the install is `PRECONDITION_FAILED`. A new file is linked into place, which fails when
   * someone created it meanwhile. Left open: a rename by another writer between that inode check
   * and this rename (Linux has no compare-and-swap rename), and a filesystem without hard links,
   * where this is a plain rename.
   */
  async swapIn(temp: string, target: Target, checked: LiveFile | null): Promise<void> {
    const raced = async (why: string) => {
      const now = await readLive(this.options.home, target, this.options.fileLimit).catch(
        () => null,
      );
      return preconditionFailed(target.path, now?.sha256 ?? null, `${why} during the install`);
    };
    if (checked === null) {
      await failpoint('install.before_rename');
      const linked = await hardLink(temp, target.absolute);
      if (linked === 'exists') throw await raced('was created by someone else');
      if (linked === 'linked') await unlink(temp);
      else await rename(temp, target.absolute);
      return;
    }
    const kept = join(target.parent, `${TEMP_PREFIX}${this.options.operationId}-k${this.seq++}`);
    const linked = await hardLink(target.absolute, kept);
    if (linked === 'absent') throw await raced('was removed');
    let keeping = linked === 'linked';
    try {
      const inodeOf = (path: string) => (lstatSync(path, { throwIfNoEntry: false }) ?? {}).ino;
      if (keeping && inodeOf(kept) !== checked.ino) throw await raced('was replaced');
      await failpoint('install.before_rename');
      if (keeping && inodeOf(target.absolute) !== checked.ino) throw await raced('was replaced');
      await rename(temp, target.absolute);
      if (!keeping) return;
      const old = await readLive(
        this.options.home,
        beside(target, kept),
        this.options.fileLimit,
      ).catch(() => null);
      if (old?.sha256 !== checked.sha256) {
        // Written in place meanwhile: its bytes go back where they were, ours are not installed.
        await rename(kept, target.absolute);
        keeping = false;
        await fsyncDir(target.parent, target.path);
        throw preconditionFailed(
          target.path,
          old?.sha256 ?? null,
          'was written during the install',
        );
      }
    } finally {
      if (keeping) await unlink(kept).catch(() => undefined);
    }
  }

  async writeTemp(
    target: Target,
    content: Uint8Array,
    attributes: Attributes,
    tag = '',
    mode = attributes.mode,
  ): Promise<string> {
    const temp = join(
      target.parent,
      `${TEMP_PREFIX}${this.options.operationId}-${tag}${this.seq++}`,
    );
    let handle: DurableHandle | undefined;
    try {
      handle = await open(temp, CREATE_TEMP, 0o600);
      await handle.writeFile(content);
      // The owner first (a chown clears set-id bits), then the mode: the file keeps both.
      const own = processIdentity();
      if (own.uid >= 0 && (attributes.uid !== own.uid || attributes.gid !== own.gid)) {
        await handle.chown(attributes.uid, attributes.gid);
      }
      // Always set explicitly: the umask narrowed the 0600 of the create, it never decides a mode.
      if (process.platform !== 'win32' || mode !== 0o600) await handle.chmod(mode);
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
  return new PreconditionFailedError(path, liveSha, why);
}
