/**
 * The write half of an installer's node operation (contract §6, docs/plugin-authoring.md): every
 * file of the request written through the controller's {@link SafeFileWriter} (compare and swap,
 * backup, atomic durable replace), then each read back and its sha256 compared with what was just
 * written; if any write or read-back fails, everything already written is restored, newest first
 * ({@link restoreWritten}), and the error is thrown — both or neither. Coupled process actions
 * come after it; an action that fails calls {@link restoreWritten} with the results.
 */
import { FleetError } from '../errors.js';
import type { ReplaceResult, SafeFileWriter } from '../interfaces/installer.js';
import { restoreWritten } from './restore.js';

/** One file of the operation, with its final bytes (secrets resolved, block spliced). */
export interface PlannedWrite {
  /** The node path (`~/…`). */
  readonly path: string;
  /** The sha256 the file must have now (`null`: it must not exist): the compare and swap. */
  readonly expectedSha256: string | null;
  readonly content: Uint8Array;
  /** The permission bits to write it with (see `ReplaceRequest.mode`); absent: keep or 0600. */
  readonly mode?: number;
  /** Checks the staged new content before it replaces the old (see `ReplaceRequest.beforeRename`). */
  readonly beforeRename?: (stagedPath: string) => Promise<void>;
}

export interface WriteVerifiedOptions {
  /**
   * How a written file's sha256 is read back (`null`: missing). Default: through the writer, with
   * the same path checks as the write (a file linked into a `symlinkInto` directory is read at its
   * target).
   */
  readonly readBack?: (path: string) => Promise<string | null>;
}

/**
 * Writes every planned file in order, then verifies each by reading it back. On any failure the
 * files written so far are restored and the error is rethrown (`RECOVERY_REQUIRED` instead, when
 * a restore failed too). Returns the writer's results, in the order of `writes`.
 */
export async function writeVerified(
  writer: SafeFileWriter,
  writes: readonly PlannedWrite[],
  options: WriteVerifiedOptions = {},
): Promise<ReplaceResult[]> {
  const readBack =
    options.readBack ?? (async (path: string) => (await writer.read(path))?.sha256 ?? null);
  const results: ReplaceResult[] = [];
  try {
    for (const write of writes) results.push(await writer.replace(write));
    for (const result of results) {
      const live = await readBack(result.path);
      if (live !== result.afterSha256) {
        throw new FleetError(
          'VERIFICATION_FAILED',
          `${result.path} reads back as ${live ?? 'missing'}, not the ${result.afterSha256} just written`,
        );
      }
    }
  } catch (error) {
    await restoreWritten(writer, results, error);
    throw error;
  }
  return results;
}
