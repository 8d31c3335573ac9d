/**
 * A failed append, in words and undone (docs/audit-log.md, "What fails closed"): why a write, an
 * fsync or a lock failed (`reasonOf`, what the log's refusal and `AUDIT_UNAVAILABLE` say), and the
 * cut back of a partial record to the end of the last whole one, verified on disk and never
 * truncated *up* (log.ts decides what the log does when the cut cannot be verified).
 */
import { errnoOf } from '../fs/errors.js';
import type { DurableHandle } from '../fs/seam.js';

/** Why an I/O step failed: its errno, or a short write's own message, or the error's message. */
export function reasonOf(error: unknown): string {
  const errno = errnoOf(error);
  if (errno === 'SHORT_WRITE') return (error as Error).message;
  return errno ?? (error instanceof Error ? error.message : String(error));
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
