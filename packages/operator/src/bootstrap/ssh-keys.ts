/** OpenSSH public keys as fleet.yaml pins them (`ssh-ed25519 AAAA…`): parsing and fingerprints. */
import { createHash } from 'node:crypto';

export interface OpenSshPublicKey {
  /** The key type, e.g. `ssh-ed25519`. */
  readonly type: string;
  /** The decoded key blob (SSH wire format: the type string, then the key material). */
  readonly blob: Buffer;
}

/**
 * Parses `type base64` (one optional trailing comment). Returns `undefined` unless the text is
 * exactly that and the blob's own type string equals `type`.
 */
export function parseOpenSshPublicKey(text: string): OpenSshPublicKey | undefined {
  const match = /^([a-z0-9-]+(?:@[a-z0-9.-]+)?) ([A-Za-z0-9+/]+={0,3})(?: [^\r\n]*)?$/.exec(
    text.trim(),
  );
  if (!match) return undefined;
  const type = match[1] as string;
  const blob = Buffer.from(match[2] as string, 'base64');
  if (blob.toString('base64') !== (match[2] as string)) return undefined;
  return blobType(blob) === type ? { type, blob } : undefined;
}

/** The type string a key blob starts with (uint32 length + bytes), or `undefined`. */
export function blobType(blob: Buffer): string | undefined {
  if (blob.length < 4) return undefined;
  const length = blob.readUInt32BE(0);
  if (length === 0 || length > 64 || 4 + length > blob.length) return undefined;
  return blob.subarray(4, 4 + length).toString('latin1');
}

/** `SHA256:<base64, unpadded>` of a key blob, as `ssh-keygen -l` prints it. */
export function sshFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}
