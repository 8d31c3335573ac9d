/**
 * A failed append, in words and undone (docs/audit-log.md, "What fails closed"): why a write, an
 * fsync or a lock failed (`reasonOf`, what the log's refusal and `AUDIT_UNAVAILABLE` say), and the
 * cut back of a partial record to the end of the last whole one, verified on disk and never
 * truncated *up* (log.ts decides what the log does when the cut cannot be verified).
 */
import { errnoOf } from '../fs/errors.js';
import type { DurableHandle } from '../fs/seam.js';

/**
 * A write that took fewer bytes than it was given: a full disk, a file-size limit
 * (docs/audit-log.md, "Short writes"). Its stable `code` is where an fs error carries its errno
 * (`errnoOf` reads it); {@link reasonOf} says its message instead, which names both counts.
 */
export class ShortWriteError extends Error {
  readonly code = 'SHORT_WRITE';
  readonly bytesWritten: number;
  readonly bytesExpected: number;

  constructor(bytesWritten: number, bytesExpected: number) {
    super(`short write: ${bytesWritten} of ${bytesExpected} bytes`);
    this.name = 'ShortWriteError';
    this.bytesWritten = bytesWritten;
    this.bytesExpected = bytesExpected;
  }
}

/** Why an I/O step failed: its errno, or a short write's own message, or the error's message. */
export function reasonOf(error: unknown): string {
  if (error instanceof ShortWriteError) return error.message;
  return errnoOf(error) ?? (error instanceof Error ? error.message : String(error));
}

/**
 * Cuts the file back to `end`, the end of the last whole record, verified on disk: the file must be
 * at least that long and end there with that record's line (`expected`, its newline included).
 * Returns why not, when it cannot.
 */
export async function cutBack(
  handle: DurableHandle,
  end: number,
  expected: Buffer,
): Promise<string | undefined> {
  try {
    const { size } = await handle.stat();
    if (size < end) {
      return `the file is ${size} bytes, shorter than the end of the last whole record (${end}); not cut, which would leave a hole`;
    }
    if (expected.length > 0 && end >= expected.length) {
      const found = Buffer.alloc(expected.length);
      const { bytesRead } = await handle.read(found, 0, found.length, end - found.length);
      if (bytesRead !== found.length || !found.equals(expected)) {
        return 'the last whole record is not where the controller left it';
      }
    }
    if (size > end) await handle.truncate(end);
    await handle.sync();
    const after = (await handle.stat()).size;
    return after === end ? undefined : `the file is ${after} bytes after the cut, not ${end}`;
  } catch (error) {
    return `the cut failed (${reasonOf(error)})`;
  }
}
