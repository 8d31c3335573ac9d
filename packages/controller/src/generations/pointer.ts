/**
 * The `current` pointer (contract §12, catalogue 50), switched atomically in one of two forms behind
 * one interface:
 *
 * - `symlink` (Linux, macOS): a temp symlink `runtime/.fleet-tmp-current-*` → `generations/<id>`
 *   is created, then renamed over `current`, then the runtime directory is fsync'd. A reader's
 *   `readlink(current)` sees the old target or the new one, never ENOENT — never `ln -sfn`, which
 *   unlinks first.
 * - `file` (Windows): a temp file holding `generations/<id>\n` is written and fsync'd, then renamed
 *   over `current` (MoveFileEx with replace: atomic on NTFS), with a bounded retry when another
 *   process holds `current` open (antivirus, indexers).
 *
 * A flip only ever names a complete generation (its manifest exists: staging renames a whole,
 * verified tree into place), and returns what `current` named before.
 */
import { randomBytes } from 'node:crypto';
import { lstat, readdir, rename, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BUILD_ID_PATTERN,
  FleetError,
  GENERATION_MANIFEST,
  pointerTarget,
  readCurrentPointer,
  type PointerState,
  type RuntimeLayout,
} from '@fleet/core/node';
import { failpoint } from '../failpoints.js';
import { createExclusive, fsyncDir } from '../fs/durable.js';
import { fsFailure } from '../fs/errors.js';
import { TEMP_PREFIX } from '../state-paths.js';

export type PointerKind = 'symlink' | 'file';

export interface CurrentPointer {
  readonly kind: PointerKind;
  readonly layout: RuntimeLayout;
  /** What `current` holds now (either form is read, whatever this pointer's kind). */
  read(): Promise<PointerState>;
  /** Points `current` at `buildId` atomically and durably; returns the previous build id. */
  flip(buildId: string): Promise<{ readonly previous: string | null }>;
}

/** The pointer form a platform uses. */
export function pointerKindFor(
  platform: NodeJS.Platform | 'linux' | 'darwin' | 'win32',
): PointerKind {
  return platform === 'win32' ? 'file' : 'symlink';
}

const RETRYABLE_ON_WINDOWS = new Set(['EPERM', 'EACCES', 'EBUSY']);

async function renameWithRetry(from: string, to: string, kind: PointerKind): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await rename(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (
        kind !== 'file' ||
        process.platform !== 'win32' ||
        attempt >= 6 ||
        !RETRYABLE_ON_WINDOWS.has(code)
      ) {
        throw error;
      }
      await sleep(25 * 2 ** attempt);
    }
  }
}

/** Removes temp pointers a crash between create and rename left behind (callers hold the lock). */
async function sweepTempPointers(layout: RuntimeLayout): Promise<void> {
  const names = await readdir(layout.root).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(`${TEMP_PREFIX}current-`))
      await unlink(join(layout.root, name)).catch(() => undefined);
  }
}

export function currentPointer(layout: RuntimeLayout, kind: PointerKind): CurrentPointer {
  return {
    kind,
    layout,
    read: () => readCurrentPointer(layout),
    async flip(buildId: string) {
      if (!BUILD_ID_PATTERN.test(buildId)) {
        throw new FleetError(
          'GENERATION_INVALID',
          `build id ${JSON.stringify(buildId)} is not a sha256`,
        );
      }
      const manifest = join(layout.generation(buildId), GENERATION_MANIFEST);
      if (!(await lstat(manifest).catch(() => undefined))?.isFile()) {
        throw new FleetError(
          'GENERATION_INVALID',
          `generation ${buildId} is not staged; current not changed`,
        );
      }
      const before = await readCurrentPointer(layout);
      if (before.state === 'invalid') {
        throw new FleetError(
          'RECOVERY_REQUIRED',
          `current is unreadable (${before.detail}); not changed`,
        );
      }
      await sweepTempPointers(layout);
      const temp = join(layout.root, `${TEMP_PREFIX}current-${randomBytes(6).toString('hex')}`);
      try {
        if (kind === 'symlink') await symlink(pointerTarget(buildId), temp);
        else await createExclusive(temp, `${pointerTarget(buildId)}\n`);
        await failpoint('runtime.flip.before_rename');
        await renameWithRetry(temp, layout.current, kind);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw fsFailure(error, 'switching current');
      }
      await fsyncDir(layout.root, 'runtime directory');
      return { previous: before.state === 'set' ? before.buildId : null };
    },
  };
}
