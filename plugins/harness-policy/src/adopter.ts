/**
 * The harness-policy adopter (contract §6, §8.5). The core captures the live file (redacted on the
 * node), reverse-substitutes host variables and scans for secrets; this decides what of a capture
 * is a canonical candidate and where it lands in the repo:
 * - CLAUDE.md: the whole capture — the whole file is managed;
 * - AGENTS.md / GEMINI.md: only the block's body (template space: LF endings). Text outside the
 *   markers belongs to the host's users, never to the fleet, so it is never adopted. Damaged
 *   markers refuse (`MARKERS_*`), and a file with no block has nothing to adopt.
 * Candidates go to `mirror/<host>/harness-policy/<file id>`. `adopt --promote` writes a
 * CLAUDE.md candidate over the canonical CLAUDE.md, and a block's candidate into the canonical's
 * policy section (the whole canonical when it has no markers: then the whole file is the section).
 */
import {
  FleetError,
  parseRepoPath,
  type Adopter,
  type Capture,
  type ManagedFile,
} from '@fleet/core/plugin';
import { findBlock, normaliseBody, spliceBlock } from './block.js';
import { harnessPolicyDomain, POLICY_MARKERS } from './domain.js';

const DOMAIN = harnessPolicyDomain.domain;

function candidate(file: ManagedFile, capture: Capture): string {
  if (file.kind === 'whole') return capture.content;
  const where = `${capture.host}:${capture.path}`;
  const block = findBlock(capture.content, file.markers ?? POLICY_MARKERS, where);
  if (block === null) {
    throw new FleetError('FILE_NOT_FOUND', `${where} has no fleet-managed block to adopt`, {
      suggestions: ['install the domain to create the block, or adopt CLAUDE.md instead'],
    });
  }
  return normaliseBody(block.body);
}

/** `mirror/<host>/harness-policy/<file id>`, checked like every repo path (no `..`, no `.git`). */
function mirrorPath(file: ManagedFile, capture: Capture): string {
  const path = `mirror/${capture.host}/${DOMAIN}/${file.id}`;
  parseRepoPath(path);
  return path;
}

/**
 * The canonical CLAUDE.md with `body` as the section a block file is viewed from: spliced between
 * the canonical's markers (everything around them kept byte for byte), or the whole canonical when
 * it has none. Damaged markers in the canonical refuse (`MARKERS_*`), a body holding a marker too.
 */
function promote(file: ManagedFile, canonical: string, body: string): string {
  if (file.kind === 'whole') return body;
  const markers = file.markers ?? POLICY_MARKERS;
  const source = `canonical ${file.canonical}`;
  return findBlock(canonical, markers, source) === null
    ? normaliseBody(body)
    : spliceBlock(canonical, body, markers, source);
}

/** The domain's adopter, loaded lazily by the registry (`register.ts`). */
export const harnessPolicyAdopter: Adopter = { domain: DOMAIN, candidate, mirrorPath, promote };
