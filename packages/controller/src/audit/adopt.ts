/**
 * What another fleet writer appended to the active segment while the controller held it open
 * (docs/audit-log.md, "Writers"): the SSH recovery receiver appends its stage and activate
 * records under the append lock (append-lock.ts), and the controller, taking the lock for its next
 * group, finds the file longer than it left it. Pure: the appended bytes are adopted only when
 * they are whole records that go on from the controller's head — each a valid record, the next
 * seq, `prev` the line hash before it — and were written by the receiver (`client` `ssh:…`, no
 * rotation). Anything else is what it always was: the log changed under the controller, and writes
 * are refused until a restart verifies the whole chain.
 */
import { auditLineHash, auditRecordSchema } from '@fleet/core/node';
import { holdsWrite } from './rotation.js';

/** The receiver's records name their caller `ssh:<key fingerprint>` or `ssh:forced-command`. */
export const SSH_CLIENT_PREFIX = 'ssh:';

/** More than any receiver request appends; a larger growth is not adopted. */
export const MAX_ADOPTED_BYTES = 1024 * 1024;

export interface Adopted {
  readonly ok: true;
  /** The last adopted record: its seq, line hash and line with its newline. */
  readonly tail: { readonly seq: number; readonly hash: string; readonly line: Buffer };
  /** The first adopted record (what opens an active segment that was empty). */
  readonly first: { readonly seq: number; readonly prev: string };
  readonly holdsWrites: boolean;
  readonly count: number;
}

export type Adoption = Adopted | { readonly ok: false; readonly why: string };

export function adoptAppended(
  bytes: Buffer,
  last: { readonly seq: number; readonly hash: string },
): Adoption {
  if (bytes.length > MAX_ADOPTED_BYTES) {
    return { ok: false, why: `${bytes.length} bytes were appended by another writer` };
  }
  const text = bytes.toString('utf8');
  if (!text.endsWith('\n')) return { ok: false, why: 'another writer left a partial record' };
  let tail = { seq: last.seq, hash: last.hash, line: Buffer.alloc(0) };
  let first: Adopted['first'] | undefined;
  let writes = false;
  const lines = text.slice(0, -1).split('\n');
  for (const line of lines) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { ok: false, why: `record ${tail.seq + 1} appended by another writer is not JSON` };
    }
    const parsed = auditRecordSchema.safeParse(value);
    if (!parsed.success) {
      return {
        ok: false,
        why: `record ${tail.seq + 1} appended by another writer is not a record`,
      };
    }
    const record = parsed.data;
    if (record.seq !== tail.seq + 1 || record.prev !== tail.hash) {
      return {
        ok: false,
        why: `a record appended by another writer (seq ${record.seq}) does not follow seq ${tail.seq}`,
      };
    }
    if (!record.client?.startsWith(SSH_CLIENT_PREFIX) || record.segment !== undefined) {
      return {
        ok: false,
        why: `record ${record.seq} was appended by another writer that is not the SSH receiver`,
      };
    }
    first ??= { seq: record.seq, prev: record.prev };
    if (holdsWrite(record)) writes = true;
    tail = { seq: record.seq, hash: auditLineHash(line), line: Buffer.from(`${line}\n`, 'utf8') };
  }
  return {
    ok: true,
    tail,
    first: first as Adopted['first'],
    holdsWrites: writes,
    count: lines.length,
  };
}
