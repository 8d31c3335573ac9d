/**
 * The final record of every operation id in the log's segments, for the controller's start
 * (recovery.ts): a finished operation is told from an interrupted one by the head its last record
 * made. A read of the files as they are, apart from the log's writing (log.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { auditLineHash, type AuditHead, type AuditRecord } from '@fleet/core/node';

/**
 * The final record of every operation id in the segments `names` of `dir`, read in that order
 * (anything but `replayed`), as the head it made.
 */
export async function readFinalRecords(
  dir: string,
  names: readonly string[],
): Promise<Map<string, AuditHead>> {
  const found = new Map<string, AuditHead>();
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const record = JSON.parse(line) as Partial<AuditRecord>;
        if (typeof record.operationId === 'string' && record.outcome !== 'replayed') {
          found.set(record.operationId, { seq: Number(record.seq), sha256: auditLineHash(line) });
        }
      } catch {
        // a malformed line is the verifier's business, not recovery's
      }
    }
  }
  return found;
}
