/**
 * The managed block of a policy file (contract §10.3, reliability catalogue H), over core's
 * managed-block editor (`@fleet/core` `findBlock`, `spliceBlock`, …: the rules and their table
 * tests live there). This module gives them the harness-policy markers as their default and adds
 * the one rule of this domain: the canonical CLAUDE.md's policy section.
 */
import {
  assertNoMarkers as coreAssertNoMarkers,
  findBlock as coreFindBlock,
  normaliseBody,
  spliceBlock as coreSpliceBlock,
  type Block,
  type BlockMarkers,
  type Eol,
} from '@fleet/core/plugin';
import { POLICY_MARKERS } from './domain.js';

export { normaliseBody, type Block, type Eol };

/** Core's `findBlock`, with the policy markers by default. */
export function findBlock(
  text: string,
  markers: BlockMarkers = POLICY_MARKERS,
  source = 'file',
): Block | null {
  return coreFindBlock(text, markers, source);
}

/** Core's `assertNoMarkers`, with the policy markers by default. */
export function assertNoMarkers(
  body: string,
  markers: BlockMarkers = POLICY_MARKERS,
  source = 'block body',
): void {
  coreAssertNoMarkers(body, markers, source);
}

/** Core's `spliceBlock`, with the policy markers by default. */
export function spliceBlock(
  liveText: string,
  body: string,
  markers: BlockMarkers = POLICY_MARKERS,
  source = 'file',
): string {
  return coreSpliceBlock(liveText, body, markers, source);
}

/**
 * The policy section of the canonical CLAUDE.md: its block's body, or the whole file (without a
 * BOM, which belongs to a file, not to a section) when it has no markers. Damaged markers in the
 * canonical are an error: a section cannot be guessed. Returned in template space.
 */
export function extractPolicySection(
  canonical: string,
  markers: BlockMarkers = POLICY_MARKERS,
  source = 'canonical CLAUDE.md',
): string {
  const block = coreFindBlock(canonical, markers, source);
  return normaliseBody(block === null ? canonical.replace(/^\ufeff/, '') : block.body);
}
