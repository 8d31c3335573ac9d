/**
 * Release signatures (issue 36; [ADR 0019](../../../../docs/adr/0019-releases-signed-with-ssh-signatures.md),
 * contract §12 "Signed releases"): an SSH signature — the SSHSIG format `ssh-keygen -Y sign`
 * writes — in the namespace `fleet-release`, over the runtime artifact's exact bytes (which hold
 * the build record and every carried plugin), made with an Ed25519 key. The node checks it
 * against its policy's `runtime.trustedKeys` (docs/node-policy.md) before it stages anything.
 *
 * The format is OpenSSH's PROTOCOL.sshsig:
 *
 *   byte[6] "SSHSIG"  uint32 version (1)  string publickey  string namespace  string reserved
 *   string hash_algorithm  string signature
 *
 * armored between `-----BEGIN SSH SIGNATURE-----` and `-----END SSH SIGNATURE-----`, and the
 * signature is over `"SSHSIG" || string namespace || string reserved || string hash_algorithm ||
 * string H(message)`. Pure: node:crypto verifies Ed25519 natively, no tool is run.
 */
import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { FleetError } from '../errors.js';

/** The namespace every release signature is made in (`ssh-keygen -Y sign -n fleet-release`). */
export const RELEASE_SIGNATURE_NAMESPACE = 'fleet-release';

const MAGIC = Buffer.from('SSHSIG', 'ascii');
const SIG_VERSION = 1;
const ARMOR_BEGIN = '-----BEGIN SSH SIGNATURE-----';
const ARMOR_END = '-----END SSH SIGNATURE-----';
const ED25519 = 'ssh-ed25519';
/** The hash algorithms PROTOCOL.sshsig allows (`ssh-keygen` uses sha512). */
const HASHES: Readonly<Record<string, 'sha256' | 'sha512'>> = {
  sha256: 'sha256',
  sha512: 'sha512',
};
/** A signature is a few hundred bytes; anything far larger is not one. */
const MAX_SIGNATURE_TEXT = 16 * 1024;

/** An SSHSIG blob, decoded (its fields as they are: nothing checked but the framing). */
export interface SshSignature {
  /** The SSHSIG version (1 is the only one). */
  readonly version: number;
  /** The signer's public key in SSH wire form (`string "ssh-ed25519" string key`). */
  readonly publicKey: Buffer;
  /** The public key's type, as its blob names it (`ssh-ed25519`, `ssh-rsa`, …). */
  readonly keyType: string;
  /** `SHA256:…`, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
  /** What the signature was made for (`fleet-release` for a release). */
  readonly namespace: string;
  /** The hash of the message the signature covers (`sha512` or `sha256`). */
  readonly hashAlgorithm: string;
  /** The signature's algorithm, as its blob names it (`ssh-ed25519`, `rsa-sha2-512`, …). */
  readonly signatureAlgorithm: string;
  /** The raw signature bytes inside the signature blob. */
  readonly signature: Buffer;
}

/** What {@link verifyReleaseSignature} found: the trusted key that signed, or why not. */
export type ReleaseSignatureVerdict =
  | { readonly ok: true; readonly key: string; readonly fingerprint: string }
  | { readonly ok: false; readonly code: 'SIGNATURE_INVALID'; readonly reason: string };

function invalid(reason: string): FleetError {
  return new FleetError('SIGNATURE_INVALID', `the release signature ${reason}`);
}

/** Reads SSH wire strings (`uint32 length || bytes`) off a buffer, refusing any overrun. */
class Reader {
  private offset = 0;
  constructor(
    private readonly bytes: Buffer,
    private readonly what: string,
  ) {}
  take(length: number, field: string): Buffer {
    if (length < 0 || this.offset + length > this.bytes.length) {
      throw invalid(`is truncated: ${this.what} ends inside its ${field}`);
    }
    const out = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }
  uint32(field: string): number {
    return this.take(4, field).readUInt32BE(0);
  }
  string(field: string): Buffer {
    return this.take(this.uint32(field), field);
  }
  text(field: string): string {
    const bytes = this.string(field);
    const text = bytes.toString('utf8');
    if (
      !Buffer.from(text, 'utf8').equals(bytes) ||
      [...bytes].some((b) => b < 0x20 || b === 0x7f)
    ) {
      throw invalid(`has a ${field} that is not printable text`);
    }
    return text;
  }
  end(): void {
    if (this.offset !== this.bytes.length) {
      throw invalid(`has ${this.bytes.length - this.offset} bytes after the end of ${this.what}`);
    }
  }
}

function sshString(value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

/** Strict base64 (padding required, nothing else): `Buffer.from` would skip what it dislikes. */
function decodeBase64(text: string, what: string): Buffer {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
    throw invalid(`is not ${what}: not base64`);
  }
  return Buffer.from(text, 'base64');
}

/** `SHA256:<base64 without padding>` of a public key blob, as OpenSSH prints fingerprints. */
export function sshKeyFingerprint(publicKey: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicKey).digest('base64').replace(/=+$/, '')}`;
}

/**
 * The one-line base64 body of a signature given armored (`ssh-keygen -Y sign`'s `.sig` file) or
 * already as one line: what a stage request carries (`artifact.signature`). `SIGNATURE_INVALID`
 * for anything else.
 */
export function signatureBody(text: string): string {
  if (text.length > MAX_SIGNATURE_TEXT) throw invalid(`is ${text.length} characters: too long`);
  const trimmed = text.trim();
  if (!trimmed.startsWith('-----')) {
    if (/\s/.test(trimmed)) throw invalid('is neither armored nor one line of base64');
    decodeBase64(trimmed, 'an SSH signature');
    return trimmed;
  }
  const lines = trimmed.split(/\r?\n/).map((line) => line.trim());
  if (lines[0] !== ARMOR_BEGIN || lines.at(-1) !== ARMOR_END) {
    throw invalid(`is not armored as an SSH signature (${ARMOR_BEGIN} … ${ARMOR_END})`);
  }
  const body = lines.slice(1, -1).join('');
  decodeBase64(body, 'an SSH signature');
  return body;
}

/**
 * Decodes a signature (armored or its one-line body) into its SSHSIG fields. Checks the framing
 * only — magic, every length, nothing trailing — and throws `SIGNATURE_INVALID` with the reason;
 * what the fields must say is {@link verifyReleaseSignature}'s.
 */
export function parseSshSignature(text: string): SshSignature {
  const blob = decodeBase64(signatureBody(text), 'an SSH signature');
  if (blob.length < MAGIC.length || !blob.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw invalid('is not an SSH signature: it does not start with "SSHSIG"');
  }
  const reader = new Reader(blob.subarray(MAGIC.length), 'the signature');
  const version = reader.uint32('version');
  const publicKey = reader.string('public key');
  const namespace = reader.text('namespace');
  reader.string('reserved field');
  const hashAlgorithm = reader.text('hash algorithm');
  const signatureBlob = reader.string('signature');
  reader.end();
  const keyType = new Reader(publicKey, 'the public key').text('key type');
  const inner = new Reader(signatureBlob, 'the signature blob');
  const signatureAlgorithm = inner.text('signature algorithm');
  const signature = inner.string('signature bytes');
  inner.end();
  return {
    version,
    publicKey,
    keyType,
    fingerprint: sshKeyFingerprint(publicKey),
    namespace,
    hashAlgorithm,
    signatureAlgorithm,
    signature,
  };
}

/** An OpenSSH public key line (`ssh-ed25519 AAAA… comment`), decoded. */
export interface SshPublicKey {
  /** The key type of the line (`ssh-ed25519`). */
  readonly type: string;
  /** The key in SSH wire form (what the line's base64 holds). */
  readonly blob: Buffer;
  /** The 32 bytes of an Ed25519 key. */
  readonly key: Buffer;
  /** `SHA256:…`, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
  /** The line without its comment: `ssh-ed25519 AAAA…`. */
  readonly line: string;
}

/**
 * Parses an OpenSSH public key line, which must be `ssh-ed25519` (ADR 0019: one algorithm): its
 * base64 holds `string "ssh-ed25519" string key(32)` and nothing more. The comment is ignored.
 * `SIGNATURE_INVALID` otherwise — a policy's schema turns that into its own problem.
 */
export function parseSshEd25519PublicKey(line: string): SshPublicKey {
  const fields = line.trim().split(/[ \t]+/);
  const [type, base64] = fields;
  if (type === undefined || base64 === undefined) {
    throw new FleetError(
      'SIGNATURE_INVALID',
      'not an OpenSSH public key line (ssh-ed25519 AAAA… comment)',
    );
  }
  if (type !== ED25519) {
    throw new FleetError(
      'SIGNATURE_INVALID',
      `the key type is ${JSON.stringify(type)}, not ssh-ed25519: only ssh-ed25519 keys sign releases (ADR 0019)`,
    );
  }
  let blob: Buffer;
  try {
    blob = decodeBase64(base64, 'a public key');
  } catch {
    throw new FleetError('SIGNATURE_INVALID', 'the key is not base64');
  }
  try {
    const reader = new Reader(blob, 'the public key');
    const inner = reader.text('key type');
    const key = reader.string('key');
    reader.end();
    if (inner !== ED25519) throw new Error(`its blob says ${inner}, not ${ED25519}`);
    if (key.length !== 32) throw new Error(`an Ed25519 key is 32 bytes, this one ${key.length}`);
    return { type, blob, key, fingerprint: sshKeyFingerprint(blob), line: `${type} ${base64}` };
  } catch (error) {
    throw new FleetError(
      'SIGNATURE_INVALID',
      `not an ssh-ed25519 public key: ${(error as Error).message}`,
    );
  }
}

/**
 * The blob an SSHSIG signature is made over (PROTOCOL.sshsig): the magic "SSHSIG", then as SSH
 * strings the namespace, an empty reserved field, the hash algorithm and H(message).
 */
export function sshSignedData(message: Buffer, namespace: string, hashAlgorithm: string): Buffer {
  const hash = HASHES[hashAlgorithm];
  if (hash === undefined) throw invalid(`uses hash algorithm ${hashAlgorithm}`);
  return Buffer.concat([
    MAGIC,
    sshString(namespace),
    sshString(Buffer.alloc(0)),
    sshString(hashAlgorithm),
    sshString(createHash(hash).update(message).digest()),
  ]);
}

/**
 * Whether `signature` (armored or its one-line body) is a `fleet-release` SSH signature over
 * exactly `message` by one of `trustedKeys` (OpenSSH public key lines; comments ignored). Checks,
 * in order: the framing, magic `SSHSIG`, version 1, the namespace, the hash algorithm (sha512 or
 * sha256), the key and signature algorithm (`ssh-ed25519`), that the key is trusted, and the
 * Ed25519 signature itself. The answer names the key (`ssh-ed25519 AAAA…`, no comment) and its
 * fingerprint, or why not — the fingerprint of the key it was made with, when it has one.
 */
export function verifyReleaseSignature(
  message: Buffer,
  signature: string,
  trustedKeys: readonly string[],
): ReleaseSignatureVerdict {
  const refuse = (reason: string): ReleaseSignatureVerdict => ({
    ok: false,
    code: 'SIGNATURE_INVALID',
    reason,
  });
  let parsed: SshSignature;
  try {
    parsed = parseSshSignature(signature);
  } catch (error) {
    return refuse((error as Error).message);
  }
  const bad = (rest: string): ReleaseSignatureVerdict => refuse(`the release signature ${rest}`);
  const by = `made with ${parsed.keyType} key ${parsed.fingerprint}`;
  if (parsed.version !== SIG_VERSION) {
    return bad(`is SSHSIG version ${parsed.version}, not ${SIG_VERSION} (${by})`);
  }
  if (parsed.namespace !== RELEASE_SIGNATURE_NAMESPACE) {
    return bad(
      `is in namespace "${parsed.namespace}", not "${RELEASE_SIGNATURE_NAMESPACE}" (${by}): sign with ssh-keygen -Y sign -n ${RELEASE_SIGNATURE_NAMESPACE}`,
    );
  }
  if (HASHES[parsed.hashAlgorithm] === undefined) {
    return bad(`uses hash algorithm ${parsed.hashAlgorithm}, not sha512 or sha256 (${by})`);
  }
  if (parsed.keyType !== ED25519 || parsed.signatureAlgorithm !== ED25519) {
    return bad(
      `is a ${parsed.signatureAlgorithm} signature (${by}): only ssh-ed25519 keys sign releases`,
    );
  }
  let key: SshPublicKey;
  try {
    key = parseSshEd25519PublicKey(`${ED25519} ${parsed.publicKey.toString('base64')}`);
  } catch (error) {
    return bad(`names a malformed key (${(error as Error).message})`);
  }
  const trusted = trustedKeys.some((line) => {
    try {
      return parseSshEd25519PublicKey(line).blob.equals(key.blob);
    } catch {
      return false;
    }
  });
  if (!trusted) {
    return bad(
      `was made with key ${key.fingerprint}, which this node does not trust (runtime.trustedKeys of its policy)`,
    );
  }
  if (parsed.signature.length !== 64) {
    return bad(`is ${parsed.signature.length} bytes, not an Ed25519 signature (${by})`);
  }
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: key.key.toString('base64url') },
    format: 'jwk',
  });
  const data = sshSignedData(message, parsed.namespace, parsed.hashAlgorithm);
  if (!verifySignature(null, data, publicKey, parsed.signature)) {
    return bad(
      `does not verify: the artifact is not the bytes key ${key.fingerprint} signed (changed, repacked or another build)`,
    );
  }
  return { ok: true, key: key.line, fingerprint: key.fingerprint };
}
