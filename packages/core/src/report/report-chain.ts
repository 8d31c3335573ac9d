/**
 * The link a scheduled report carries (docs/scheduled-reports.md "Reports as evidence"): which
 * schedule wrote it, its place in that schedule's chain, and the sha256 of the report before it —
 * so a report deleted, edited, truncated or moved in the repository's `reports/` folder breaks a
 * link `fleet schedule verify` finds, as an audit record's `prev` does in a node's log
 * (docs/audit-log.md). The commit the report read is the report's own `repoCommit`. A report
 * written without a schedule (`fleet drift --report-dir`), or before chains existed, has no
 * `chain`: it is read as "before the chain", never as broken.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { sha256Schema } from '../wire/protocol.js';

export const REPORT_CHAIN_SCHEDULES = ['drift', 'version'] as const;

export const reportChainSchema = z.lazy(() =>
  z.strictObject({
    /** The schedule whose chain this is: one chain per report verb and repository. */
    schedule: z.enum(REPORT_CHAIN_SCHEDULES),
    /** 1, 2, 3… along the chain. */
    seq: z.number().int().positive(),
    /** The report before it (its path in the repository, `/`-separated, and its bytes' sha256). */
    previous: z
      .strictObject({ file: z.string().min(1).max(4096), sha256: sha256Schema })
      .nullable(),
    /**
     * Where the previous link came from: `head` (the head the operator's state directory keeps),
     * `folder` (no head was kept: the newest chained report found in the folder — a deletion
     * before then could not be seen), `start` (the first report of the chain).
     */
    anchor: z.enum(['head', 'folder', 'start']),
    /** sha256 of the set's other files (`md`, `html`), which cannot name the JSON's own hash. */
    companions: z.record(z.string().regex(/^[a-z]{1,8}$/), sha256Schema),
  }),
);

export type ReportChain = z.infer<typeof reportChainSchema>;
export type ReportChainSchedule = (typeof REPORT_CHAIN_SCHEDULES)[number];
