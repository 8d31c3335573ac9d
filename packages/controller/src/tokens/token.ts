/**
 * Token format: `flt_<id>_<secret>` — a 16-hex-digit id (the token's accessor, safe to log and to
 * look the token up by) and 32 random bytes in base64url. The store keeps only the sha256 of the
 * whole token; a presented token is looked up by its id and compared with `timingSafeEqual` of
 * the hashes, so neither the lookup nor the comparison leaks the secret part.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const FORMAT = /^flt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export function newTokenId(): string {
  return randomBytes(8).toString('hex');
}

export function mintToken(id: string): string {
  return `flt_${id}_${randomBytes(32).toString('base64url')}`;
}

/** The id of a well-formed per-client token, else `undefined`. */
export function tokenIdOf(token: string): string | undefined {
  return FORMAT.exec(token)?.[1];
}

export function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time equality of two sha256 digests (hex or bytes). */
export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
