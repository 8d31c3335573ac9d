import { FleetError, isFleetError } from '../errors.js';
import type { ReplaceResult, SafeFileWriter } from '../interfaces/installer.js';

/**
 * For an installer's node half whose operation failed after some writes: restores every file
 * written so far, newest first. One restore failing does not stop the others; if any failed, the
 * operator must hear that a file needs recovery (`RECOVERY_REQUIRED`) more than the original
 * error, which is kept as the cause. Returns normally when everything was put back.
 */
export async function restoreWritten(
  writer: SafeFileWriter,
  results: readonly ReplaceResult[],
  cause: unknown,
): Promise<void> {
  const failed: string[] = [];
  for (const result of [...results].reverse()) {
    try {
      await writer.restore(result);
    } catch {
      failed.push(result.path);
    }
  }
  if (failed.length > 0) {
    const why = isFleetError(cause) ? `${cause.code}: ${cause.message}` : 'the install failed';
    throw new FleetError(
      'RECOVERY_REQUIRED',
      `${why}; and ${failed.join(', ')} could not be restored from backup`,
      { cause },
    );
  }
}
