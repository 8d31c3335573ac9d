/**
 * TEST HELPER — a small, honest `SafeFileWriter` over a fake host's real temporary home, for the
 * node-half tests of this plugin until `@fleet/testkit` ships one (the controller's real writer is
 * `packages/controller/src/writer.ts`; swap it in here when the testkit exports it).
 *
 * It really does what the interface promises, on the real filesystem: compare-and-swap on the
 * live sha256 (`PRECONDITION_FAILED` carrying the live sha), no write at all for equal content
 * (`unchanged`: same inode, same mtime, no backup), a 0600 backup in a 0700 directory under
 * `~/.local/state/fleet/backups/<domain>/`, an exclusive temp file in the target's own directory,
 * fsync, rename over the target, directory fsync; `restore` puts the backed-up bytes back the same
 * way. What it leaves out is the controller's business, not the domain's: the allowlist, the
 * per-path lock, the journal, failpoints and the token re-check.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  FleetError,
  parseHomePath,
  type ReplaceRequest,
  type ReplaceResult,
  type SafeFileWriter,
} from '@fleet/core';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export interface TempHomeWriterOptions {
  readonly domain: string;
  /** Fault injection for tests: `replace` of this path fails with `IO_ERROR` before writing. */
  readonly failReplaceOf?: string;
}

export class TempHomeWriter implements SafeFileWriter {
  /** Every replace that returned, in order (what a receipt would list). */
  readonly results: ReplaceResult[] = [];
  private readonly backups = new Map<ReplaceResult, string>();

  constructor(
    private readonly home: string,
    private readonly options: TempHomeWriterOptions,
  ) {}

  /** `~/`-relative path of the backup directory of this writer's domain. */
  get backupDir(): string {
    return `~/.local/state/fleet/backups/${this.options.domain}`;
  }

  private absolute(path: string): string {
    return join(this.home, ...parseHomePath(path));
  }

  async read(path: string): Promise<{ content: Uint8Array; sha256: string } | null> {
    const absolute = this.absolute(path);
    let handle;
    try {
      handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return null;
      if (code === 'ELOOP') throw new FleetError('SYMLINK_REFUSED', `${path} is a symlink`);
      throw error;
    }
    try {
      const content = await handle.readFile();
      return { content, sha256: sha256(content) };
    } finally {
      await handle.close();
    }
  }

  async replace(request: ReplaceRequest): Promise<ReplaceResult> {
    if (request.path === this.options.failReplaceOf) {
      throw new FleetError('IO_ERROR', `${request.path}: injected failure (test)`);
    }
    const live = await this.read(request.path);
    const liveSha = live?.sha256 ?? null;
    if (liveSha !== request.expectedSha256) {
      throw Object.assign(
        new FleetError(
          'PRECONDITION_FAILED',
          `${request.path}: live sha256 is ${liveSha ?? 'absent'}; nothing written`,
        ),
        { liveSha256: liveSha },
      );
    }
    const afterSha = sha256(request.content);
    if (live !== null && liveSha === afterSha) {
      const result = {
        path: request.path,
        beforeSha256: liveSha,
        afterSha256: afterSha,
        backupPath: null,
        unchanged: true,
      };
      this.results.push(result);
      return result;
    }
    const target = this.absolute(request.path);
    const mode = live === null ? 0o600 : (await lstat(target)).mode & 0o777;
    const backupPath = live === null ? null : await this.backup(request.path, live.content);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await this.atomicWrite(target, request.content, mode);
    const result = {
      path: request.path,
      beforeSha256: liveSha,
      afterSha256: afterSha,
      backupPath,
      unchanged: false,
    };
    if (backupPath !== null) this.backups.set(result, backupPath);
    this.results.push(result);
    return result;
  }

  async restore(result: ReplaceResult): Promise<void> {
    if (result.unchanged) return;
    const target = this.absolute(result.path);
    const backup = this.backups.get(result);
    if (result.backupPath === null || backup === undefined) {
      await unlink(target); // the replace created the file: restoring removes it
      return;
    }
    await this.atomicWrite(
      target,
      await readFile(this.absolute(backup)),
      (await lstat(target)).mode & 0o777,
    );
  }

  private async backup(path: string, bytes: Uint8Array): Promise<string> {
    const dir = this.absolute(this.backupDir);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const name = `${basename(path)}.${Date.now()}.${randomBytes(4).toString('hex')}`;
    const handle = await open(join(dir, name), 'wx', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return `${this.backupDir}/${name}`;
  }

  /** Exclusive temp file beside the target, fsync, rename over it, fsync the directory. */
  private async atomicWrite(target: string, bytes: Uint8Array, mode: number): Promise<void> {
    const temp = join(dirname(target), `.fleet-test-tmp-${randomBytes(6).toString('hex')}`);
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.chmod(mode);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await handle.close();
    await rename(temp, target);
    const dir = await open(dirname(target), constants.O_RDONLY);
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}

/** The same writer without `read`, as a controller predating `SafeFileWriter.read` hands it out. */
export function withoutRead(writer: TempHomeWriter): SafeFileWriter {
  // The interface now requires `read`; a controller built against an older @fleet/core may still
  // hand out a writer without it, which is what this stands for.
  const old: Omit<SafeFileWriter, 'read'> = {
    replace: (r) => writer.replace(r),
    restore: (r) => writer.restore(r),
  };
  return old as SafeFileWriter;
}
