/**
 * The node's allowlist (contract §5): exactly the paths registered domains declare — every managed
 * file's and derived path's declared `path` under the home — plus the backups the controller
 * itself made of them. Per-host path variables are an operator-side notion: the node accepts the
 * declared paths only, exactly as spelled. Everything else is `PATH_OUTSIDE_ROOT`.
 */
import { FleetError, parseHomePath, type FileFormat, type Registry } from '@fleet/core';
import { backupFileId, parseBackupName } from './backups.js';
import { STATE_DIR } from './state-paths.js';

export interface AllowedPath {
  readonly domain: string;
  readonly fileId: string;
  readonly path: string;
  readonly kind: 'file' | 'derived';
  readonly format: FileFormat;
  /** How many backups of this file the node keeps. */
  readonly backups: number;
  /** Whether the domain's installer owns process actions (`coupling: process`). */
  readonly processCoupled: boolean;
}

export interface AllowedBackup extends Omit<AllowedPath, 'kind'> {
  readonly kind: 'backup';
  /** The managed path the backup is a copy of. */
  readonly of: string;
}

export const DEFAULT_BACKUPS = 10;
const BACKUP_PREFIX = `~/${STATE_DIR}/backups/`;

export class Allowlist {
  private readonly byPath = new Map<string, AllowedPath>();

  constructor(registry: Registry) {
    for (const { descriptor } of registry.domains()) {
      const common = {
        domain: descriptor.domain,
        backups: descriptor.backups ?? DEFAULT_BACKUPS,
        processCoupled: descriptor.coupling.kind === 'process',
      };
      for (const file of descriptor.files) {
        this.add({
          ...common,
          fileId: file.id,
          path: file.path,
          kind: 'file',
          format: file.format,
        });
      }
      for (const derived of descriptor.derivedPaths ?? []) {
        this.add({
          ...common,
          fileId: derived.id,
          path: derived.path,
          kind: 'derived',
          format: derived.format,
        });
      }
    }
  }

  private add(entry: AllowedPath): void {
    // The registry already refuses two plugins claiming one path; first claimant wins here too.
    if (!this.byPath.has(entry.path)) this.byPath.set(entry.path, entry);
  }

  all(): AllowedPath[] {
    return [...this.byPath.values()].sort(
      (a, b) => a.domain.localeCompare(b.domain) || a.path.localeCompare(b.path),
    );
  }

  forDomain(domain: string): AllowedPath[] {
    return this.all().filter((entry) => entry.domain === domain);
  }

  /** The entry of a `~/` path: `PATH_INVALID` for a bad path, `PATH_OUTSIDE_ROOT` if not allowed. */
  require(path: string, domain?: string): AllowedPath {
    parseHomePath(path);
    const entry = this.byPath.get(path);
    if (!entry || (domain !== undefined && entry.domain !== domain)) {
      throw new FleetError(
        'PATH_OUTSIDE_ROOT',
        `${JSON.stringify(path)} is not on this node's allowlist${
          domain === undefined ? '' : ` for domain ${domain}`
        }`,
        { suggestions: ['only the paths registered domains declare can be read or written'] },
      );
    }
    return entry;
  }

  /** A managed path or one of the controller's backups of one (readable, never writable). */
  requireReadable(path: string): AllowedPath | AllowedBackup {
    parseHomePath(path);
    if (path.startsWith(BACKUP_PREFIX)) {
      const [domain, name, ...rest] = path.slice(BACKUP_PREFIX.length).split('/');
      const parsed = name === undefined || rest.length > 0 ? undefined : parseBackupName(name);
      const of =
        parsed &&
        this.all().find((e) => e.domain === domain && backupFileId(e.fileId) === parsed.fileId);
      if (of) return { ...of, kind: 'backup', of: of.path, path };
    }
    return this.require(path);
  }
}
