/**
 * `POST /v1/audit`: the node's audit log read back — every kept segment (`audit.<seq>.jsonl`, then
 * the active `audit.jsonl`, under `~/.local/state/fleet/`) as one sequence of lines, oldest first —
 * so the operator can check the hash chain itself (`fleet audit verify --host`). The lines are
 * answered verbatim — the raw JSON text the node hashed, not re-serialised records — with the
 * chain head the controller holds in memory (a trusted head: it catches an edit of the very last
 * line or a cut tail, which the lines alone cannot show).
 *
 * Paging is by line: `fromSeq` is the 1-based line to start at. In an intact log that was never
 * pruned a line's number is its record's `seq`; once retention pruned older segments, line 1 is
 * the first kept record (read it to know the offset). In a tampered log they differ anyway, and
 * paging by line is what lets the verifier see the files exactly as they are. A client pages with
 * `fromSeq + lines.length` while `more` is true (docs/audit-log.md).
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { sha256Schema } from './protocol.js';

/** Lines one answer carries at most (the request's `limit` may not exceed it). */
export const MAX_AUDIT_READ_LINES = 5000;
/** Lines one answer carries when the request names no `limit`. */
export const DEFAULT_AUDIT_READ_LINES = 1000;

export const auditReadRequestSchema = z.lazy(() =>
  z.strictObject({
    /** The 1-based line to start at (default 1); equal to the record's seq in an intact log. */
    fromSeq: z.number().int().positive().optional(),
    limit: z.number().int().positive().max(MAX_AUDIT_READ_LINES).optional(),
  }),
);

export const auditReadResponseSchema = z.lazy(() =>
  z.strictObject({
    nodeId: z.string(),
    /** The line the first of `lines` is (the request's `fromSeq`, default 1). */
    fromSeq: z.number().int().positive(),
    /** Complete lines of `audit.jsonl`, verbatim, without their newline. */
    lines: z.array(z.string()).max(MAX_AUDIT_READ_LINES),
    /**
     * The last record the controller appended, as it holds it in memory (`null`: nothing appended
     * since the log was created). Taken before the file is read, so every line up to it is there.
     */
    head: z.strictObject({ seq: z.number().int().positive(), sha256: sha256Schema }).nullable(),
    /** More lines follow: ask again from `fromSeq + lines.length`. */
    more: z.boolean(),
    /** The file ends in an incomplete line (no newline). It is not in `lines`. */
    torn: z.boolean(),
  }),
);

export type AuditReadRequest = z.infer<typeof auditReadRequestSchema>;
export type AuditReadResponse = z.infer<typeof auditReadResponseSchema>;
