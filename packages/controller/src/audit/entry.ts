/**
 * What a caller appends to the audit log; `seq`, `ts` and `prev` are the log's (contract §9). Its
 * own module so that the log and its counters (reads, refusals), which the log owns, name it
 * without importing each other.
 */
import type { AuditRecord } from '@fleet/core/node';

export type AuditEntry = Omit<AuditRecord, 'seq' | 'ts' | 'prev'>;
