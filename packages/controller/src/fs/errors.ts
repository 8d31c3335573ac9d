import { FleetError, isFleetError, type ErrorCode } from '@fleet/core/node';

/** The errno of a Node fs error, if it is one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A filesystem failure as a wire error: ENOSPC/EDQUOT → `IO_NOSPACE`, a symlink met with
 * `O_NOFOLLOW` → `SYMLINK_REFUSED`, anything else → `IO_ERROR`. The message names the `~/` path and
 * the errno, never content. A fleet error passes through unchanged.
 */
export function fsFailure(error: unknown, what: string, fallback: ErrorCode = 'IO_ERROR'): Error {
  if (isFleetError(error)) return error as unknown as Error;
  const errno = errnoOf(error);
  if (errno === 'ENOSPC' || errno === 'EDQUOT') {
    return new FleetError('IO_NOSPACE', `${what}: no space left on the node (${errno})`, {
      cause: error,
    });
  }
  if (errno === 'ELOOP') {
    return new FleetError('SYMLINK_REFUSED', `${what} is a symbolic link; refused`, {
      cause: error,
    });
  }
  return new FleetError(fallback, `${what}: ${errno ?? 'I/O error'}`, { cause: error });
}
