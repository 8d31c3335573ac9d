import { FleetError } from '@fleet/core/node';

/**
 * Per-path locks (contract §5): an install holds the lock of every path it writes for its whole
 * duration, so two installs of one file never interleave; the second gets `LOCKED` at once
 * rather than waiting (it would be planned against a file about to change).
 */
export class PathLocks {
  private readonly holders = new Map<string, string>();

  /** Takes every lock or none; `LOCKED` naming the first path another operation holds. */
  acquire(paths: readonly string[], operationId: string): void {
    const busy = paths.find((path) => {
      const holder = this.holders.get(path);
      return holder !== undefined && holder !== operationId;
    });
    if (busy !== undefined) {
      throw new FleetError('LOCKED', `${busy} is locked by another operation in progress`, {
        suggestions: ['retry after it finishes; re-plan first, the file is about to change'],
      });
    }
    for (const path of paths) this.holders.set(path, operationId);
  }

  holds(path: string, operationId: string): boolean {
    return this.holders.get(path) === operationId;
  }

  release(operationId: string): void {
    for (const [path, holder] of this.holders)
      if (holder === operationId) this.holders.delete(path);
  }
}
