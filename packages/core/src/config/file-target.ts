/**
 * One file target: what a host should hold of one declared file (its node path, its canonical
 * source and its desired managed view), the key of a (domain, file) pair in the history indexes,
 * and the files a snapshot request asks a node for. Apart from their computation (targets.ts):
 * the plan, drift's inputs and the file items read targets without computing one.
 */
import type { Problem } from '../errors.js';
import type { ManagedFile } from '../interfaces/domain.js';
import type { SOURCE_BYTES } from '../repo/sources.js';
import type { SnapshotFileRequest } from '../wire/snapshot.js';

export interface FileTarget {
  readonly domain: string;
  readonly file: ManagedFile;
  /** Node path for this host. */
  readonly path: string;
  /** Repo path of the canonical source. */
  readonly canonical: string;
  /**
   * Desired managed content, or the problem that prevented computing it. `encoding: base64`: a
   * whole file whose source is not UTF-8 text — `content` is its bytes in base64, installed and
   * compared byte for byte (contract §10.4).
   */
  readonly desired:
    | { readonly ok: true; readonly content: string; readonly encoding?: typeof SOURCE_BYTES }
    | { readonly ok: false; readonly problem: Problem };
}

/**
 * The files one snapshot request asks a node for: each target's path with its domain (the node
 * refuses a domain it does not serve, or a path its policy does not accept, by name), once each.
 * A whole file with a declared mode (contract §10.4) asks for the live mode too — only such a file,
 * so a node that predates the field is asked for it only where it matters (and refuses loudly).
 */
export function snapshotFilesOf(
  targets: readonly (Pick<FileTarget, 'domain' | 'path'> & {
    readonly file?: Pick<ManagedFile, 'kind' | 'mode'>;
    readonly desired?: FileTarget['desired'];
  })[],
): SnapshotFileRequest[] {
  const seen = new Map<string, SnapshotFileRequest>();
  for (const { domain, path, file, desired } of targets) {
    const mode = file?.kind === 'whole' && file.mode !== undefined;
    // A file whose source is bytes is compared by bytes: a live file that is not text is
    // answered (its sha256), not refused — asked only for such a file, as `mode` is.
    const bytes = desired?.ok === true && desired.encoding !== undefined;
    if (!seen.has(path)) {
      seen.set(path, {
        domain,
        path,
        ...(mode ? { mode: true as const } : {}),
        ...(bytes ? { bytes: true as const } : {}),
      });
    }
  }
  return [...seen.values()];
}

/** Key of a (domain, file) pair in the history indexes. */
export const targetKey = (domain: string, fileId: string): string => `${domain}\u0000${fileId}`;
