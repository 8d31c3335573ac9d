/** A node audit log's lines for the operator's audit tests (audit-log, audit-services). */
import { AUDIT_GENESIS, auditLineHash } from '@fleet/core';

/** Audit lines seq 1..`count`, each chained to the one before. */
export function chain(count: number): string[] {
  const out: string[] = [];
  let prev = AUDIT_GENESIS;
  for (let seq = 1; seq <= count; seq += 1) {
    const line = JSON.stringify({
      seq,
      ts: '2026-05-01T10:00:00.000Z',
      prev,
      operationId: null,
      client: 'tok_1',
      operation: 'config.install',
      paths: [],
      files: [],
      outcome: 'ok',
      code: null,
      detail: `record ${seq}`,
    });
    prev = auditLineHash(line);
    out.push(line);
  }
  return out;
}
