/**
 * The reusable adopter (contract §6, §8.5) for domains whose canonical source of a file is the
 * file itself (`whole`) or its block's body (`block`) — the files domain, the gitconfig example and
 * every plugin `fleet plugins new` writes. A `whole` file's candidate is the whole capture; a
 * `block` file's is its block's body only: the lines outside the markers belong to the host's
 * users and are never adopted. Reverse substitution and the secret scan are the core's.
 */
import { FleetError } from '../errors.js';
import type { Adopter, Capture } from '../interfaces/adopter.js';
import type { ManagedFile } from '../interfaces/domain.js';
import { parseRepoPath } from '../paths.js';
import { findBlock, normaliseBody } from './block.js';

export interface FileAdopterOptions {
  /** The domain it adopts for. */
  readonly domain: string;
  /**
   * The candidate's name under `mirror/<host>/<domain>/` (default: the file's id). Checked like
   * every repository path: no `..`, no `.git`.
   */
  readonly mirrorName?: (file: ManagedFile) => string;
}

/** An {@link Adopter} for `whole` and `block` files whose canonical is the managed content. */
export function fileAdopter(options: FileAdopterOptions): Adopter {
  const { domain } = options;
  const mirrorName = options.mirrorName ?? ((file: ManagedFile) => file.id);
  return {
    domain,
    candidate(file: ManagedFile, capture: Capture): string {
      if (file.kind !== 'block') return capture.content;
      const where = `${capture.host}:${capture.path}`;
      if (file.markers === undefined) throw new FleetError('BAD_REQUEST', `${where}: no markers`);
      const block = findBlock(capture.content, file.markers, where);
      if (block === null) {
        throw new FleetError('FILE_NOT_FOUND', `${where} has no fleet-managed block to adopt`, {
          suggestions: [
            `install the ${domain} domain on ${capture.host} first: the block is created then`,
          ],
        });
      }
      return normaliseBody(block.body);
    },
    mirrorPath(file: ManagedFile, capture: Capture): string {
      const path = `mirror/${capture.host}/${domain}/${mirrorName(file)}`;
      parseRepoPath(path);
      return path;
    },
    // The canonical of a block file is the block's body itself: promoting writes the candidate.
    promote: (file, _canonical, candidate) =>
      file.kind === 'block' ? normaliseBody(candidate) : candidate,
  };
}
