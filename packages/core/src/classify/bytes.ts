/**
 * Classification of a whole file whose source is not UTF-8 text (contract §10.4, §8.2), pure: it
 * is compared by bytes — by sha256, the live file's (the node's) with the desired source's, each
 * published version's and each of fleet's own writes — since no line of it means anything. The
 * rule is classify.ts's: fleet replaces without `--force` only what it can prove nobody changed.
 *
 * - `current`: the live bytes are the source's;
 * - `missing` / `deleted`: no file, and fleet never wrote / did write there;
 * - `stale`: the live bytes are a published version's, or a content fleet wrote — safe to replace;
 * - `modified`: bytes of no known version — a hand change, never replaced without `--force`.
 */
import { createHash } from 'node:crypto';
import type { Classification, FleetWrite, VersionSource } from './classify.js';
import type { CanonicalVersion } from './history.js';

/** sha256 of bytes, lowercase hex (as the node reports a live file's). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * A published version's bytes: its base64 decoded when it is not text, its text in UTF-8
 * otherwise (what a version without placeholders renders to, byte for byte).
 */
export function versionBytes(version: Pick<CanonicalVersion, 'content' | 'encoding'>): Uint8Array {
  return version.encoding === 'base64'
    ? Uint8Array.from(Buffer.from(version.content, 'base64'))
    : new TextEncoder().encode(version.content);
}

/** The live side of a bytes file: its sha256 (`null`: no file) and fleet's writes there. */
export interface LiveBytes {
  readonly sha256: string | null;
  readonly writes: readonly FleetWrite[];
}

/**
 * Classifies a bytes file. `desired` is the source's sha256 now, with the commit it comes from;
 * `knownVersion` names the published version whose bytes have a given sha256, if any.
 */
export function classifyBytes(
  live: LiveBytes,
  desired: { readonly sha256: string; readonly source: VersionSource },
  knownVersion: (sha256: string) => VersionSource | undefined,
): Classification {
  if (live.sha256 === null) {
    const lastWrite = live.writes[0];
    return lastWrite ? { state: 'deleted', lastWrite } : { state: 'missing' };
  }
  if (live.sha256 === desired.sha256) return { state: 'current' };
  const known = knownVersion(live.sha256);
  if (known !== undefined) return { state: 'stale', equals: known, lineEndingsOnly: false };
  const write = live.writes.find((w) => w.sha256 === live.sha256);
  if (write !== undefined) {
    const equals = { kind: 'installed', at: write.at, operationId: write.operationId } as const;
    return { state: 'stale', equals, lineEndingsOnly: false };
  }
  return { state: 'modified', comparedWith: desired.source, deleted: [], moved: [], added: [] };
}

/** A bytes file in a diff's place: what it is, never its content (`binary, N bytes, sha256 …`). */
export function describeBytes(size: number, sha256: string): string {
  return `binary, ${size} byte${size === 1 ? '' : 's'}, sha256 ${sha256}`;
}
