/**
 * The files adopter (contract §6, §8.5): a `whole` entry's candidate is the whole capture; a
 * `block` entry's is its block's body only — the lines outside the markers belong to the host's
 * users, never to the fleet. Candidates go to `mirror/<host>/files/<path without ~/>`;
 * `adopt --promote` writes the candidate over the entry's source (for a block entry the source is
 * the body itself).
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
import { filesDomain } from './domain.js';

const DOMAIN = filesDomain.domain;

function candidate(file: ManagedFile, capture: Capture): string {
  if (file.kind === 'whole') return capture.content;
  const where = `${capture.host}:${capture.path}`;
  if (file.markers === undefined) throw new FleetError('BAD_REQUEST', `${where}: no markers`);
  const block = findBlock(capture.content, file.markers, where);
  if (block === null) {
    throw new FleetError('FILE_NOT_FOUND', `${where} has no fleet-managed block to adopt`, {
      suggestions: ['install the entry to create the block first'],
    });
  }
  return normaliseBody(block.body);
}

function mirrorPath(file: ManagedFile, capture: Capture): string {
  const path = `mirror/${capture.host}/${DOMAIN}/${file.path.replace(/^~\//, '')}`;
  parseRepoPath(path);
  return path;
}

function promote(file: ManagedFile, _canonical: string, body: string): string {
  return file.kind === 'whole' ? body : normaliseBody(body);
}

/** The domain's adopter, loaded lazily by the registry (`register.ts`). */
export const filesAdopter: Adopter = { domain: DOMAIN, candidate, mirrorPath, promote };
