/**
 * The journal of audit heads seen since a repository's heads file was last written
 * (docs/audit-log.md "The heads the operator keeps"): `<name>.seen.jsonl` beside `<name>.json`,
 * one line per verb that saw heads — the verb, when, and each host's `<seq>:<sha256>`.
 *
 * Why a journal: the heads file keeps up to 64 heads per host, so rewriting it after every verb
 * cost a 1,000-host fleet ~0.27 s a verb once the operator had not verified for a while (11 MB
 * read, checked, written and fsync'd; contract §14). Appending costs what the verb saw, nothing
 * more; the journal is folded into the file when it outgrows it, and by `audit verify`.
 *
 * Pure functions over text here, and the one append; the store (audit-heads.ts) decides when to
 * fold.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { FleetError } from '../errors.js';
import { parseStrictJson } from '../json.js';
import { timestampSchema } from '../wire/protocol.js';
import { formatAuditHead, parseAuditHead, type AuditHead } from '../wire/audit.js';

export const AUDIT_HEADS_JOURNAL_SCHEMA = 'fleet.audit-heads-seen/v1';

const journalEntrySchema = z.lazy(() =>
  z.strictObject({
    schema: z.literal(AUDIT_HEADS_JOURNAL_SCHEMA),
    /** The repository the heads belong to, as in the heads file (a copied file is refused). */
    repo: z.string().min(1),
    seenAt: timestampSchema,
    verb: z.string().max(100),
    /** Host → `<seq>:<sha256>` ({@link formatAuditHead}), read as the head it names. */
    heads: z.record(
      z.string(),
      z.string().transform((text, ctx) => {
        const head = parseAuditHead(text);
        if (head === undefined) ctx.addIssue({ code: 'custom', message: 'not <seq>:<sha256>' });
        return head ?? z.NEVER;
      }),
    ),
  }),
);
export type AuditHeadsJournalEntry = z.output<typeof journalEntrySchema>;

/** The line one verb appends (with its newline). */
export function journalLine(
  repo: string,
  heads: ReadonlyMap<string, AuditHead>,
  seenAt: string,
  verb: string,
): string {
  const entry: z.input<typeof journalEntrySchema> = {
    schema: AUDIT_HEADS_JOURNAL_SCHEMA,
    repo,
    seenAt,
    verb: verb.slice(0, 100),
    heads: Object.fromEntries([...heads].map(([host, head]) => [host, formatAuditHead(head)])),
  };
  return `${JSON.stringify(entry)}\n`;
}

/**
 * The entries of a journal's text, oldest first. A last line without its newline is an append a
 * crash cut short: it is left out (its verb's heads are lost, as a lost race loses them), and
 * {@link appendJournalLine} cuts it off before it appends. Any whole line that is not an entry of
 * `repo` is an error naming the file and the line: never guessed around.
 */
export function parseJournal(text: string, path: string, repo: string): AuditHeadsJournalEntry[] {
  const end = text.lastIndexOf('\n') + 1;
  const lines = text.slice(0, end).split('\n').slice(0, -1);
  return lines.map((line, index) => {
    const bad = (why: string) =>
      new FleetError('USAGE', `${path} line ${index + 1}: ${why}`, {
        suggestions: [`move it aside to start the journal afresh: mv ${path} ${path}.bad`],
      });
    let parsed;
    try {
      parsed = journalEntrySchema.safeParse(parseStrictJson(line, 'the line', 'USAGE'));
    } catch (error) {
      throw bad(error instanceof Error ? error.message : String(error));
    }
    if (!parsed.success) throw bad('not a line of audit heads fleet wrote');
    if (parsed.data.repo !== repo) throw bad('holds the audit heads of another repository');
    return parsed.data;
  });
}

/**
 * Appends one line and fsyncs it (0600, created if absent, never through a symbolic link). A
 * journal whose last line lacks its newline (an append a crash cut short) is first cut back to its
 * last whole line, so the torn bytes never join the new line.
 */
export async function appendJournalLine(path: string, line: string): Promise<void> {
  const flags =
    constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0);
  const handle = await open(path, flags, 0o600);
  try {
    const { size } = await handle.stat();
    if (size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        const whole = await handle.readFile();
        await handle.truncate(whole.lastIndexOf(0x0a) + 1);
      }
    }
    await handle.appendFile(line);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
