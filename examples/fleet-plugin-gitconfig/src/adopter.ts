/**
 * The gitconfig adopter (fleet `Adopter`): when a host's block was edited by hand and the
 * operator decides the repository should admit it (`fleet config adopt HOST ~/.gitconfig`), the
 * candidate is the block's body only — the user's own lines outside the markers are theirs and
 * are never adopted. The core has already redacted secrets on the node, reverse-substitutes host
 * variables (`ops@example.org` → `{{ host.git_email }}`) and scans for secrets; the candidate lands
 * in `mirror/<host>/gitconfig/gitconfig`, to be promoted to the canonical by an ordinary commit.
 */
import {
  FleetError,
  findBlock,
  normaliseBody,
  parseRepoPath,
  type Adopter,
  type Capture,
  type ManagedFile,
} from '@fleet/core';
import { DOMAIN, GITCONFIG_MARKERS } from './domain.js';

function candidate(file: ManagedFile, capture: Capture): string {
  const where = `${capture.host}:${capture.path}`;
  const block = findBlock(capture.content, file.markers ?? GITCONFIG_MARKERS, where);
  if (block === null) {
    throw new FleetError('FILE_NOT_FOUND', `${where} has no fleet-managed block to adopt`, {
      suggestions: [`install the ${DOMAIN} domain on ${capture.host} first`],
    });
  }
  return normaliseBody(block.body);
}

function mirrorPath(file: ManagedFile, capture: Capture): string {
  const path = `mirror/${capture.host}/${DOMAIN}/${file.id}`;
  parseRepoPath(path); // no `..`, no `.git`: checked like every repo path
  return path;
}

/** Makes the domain's adopter (loaded lazily through `register.ts`). */
export function createGitconfigAdopter(): Adopter {
  return { domain: DOMAIN, candidate, mirrorPath };
}
