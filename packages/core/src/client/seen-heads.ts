/**
 * The audit heads themselves, apart from where they are kept (docs/audit-log.md "The heads the
 * operator keeps"): the shape of a repository's heads file, the pure rules of a host's bounded list
 * ({@link addSeenHead}, {@link foldJournal}), and the heads this process's clients observed on
 * each controller's answer (`fleet-audit-head`), held in memory until a verb records them. Apart
 * from the store (audit-heads.ts), which reads and writes the files: the client's transport needs
 * only these (a head parsed and observed), never the files.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { sha256Schema, timestampSchema } from '../wire/protocol.js';
import { formatAuditHead, parseAuditHead, type AuditHead } from '../wire/audit.js';
import type { AuditHeadsJournalEntry } from './audit-heads-journal.js';

// Defined with the wire protocol, which the controller imports without the operator's client.
export { AUDIT_HEAD_HEADER } from '../wire/protocol.js';
export const MAX_HEADS_PER_HOST = 64;

const seenHeadSchema = z.lazy(() =>
  z.strictObject({
    seq: z.number().int().positive(),
    sha256: sha256Schema,
    seenAt: timestampSchema,
    /** The verb that saw it (`drift`, `config install`, `audit verify`). */
    verb: z.string().max(100),
  }),
);
export type SeenHead = z.infer<typeof seenHeadSchema>;

export const auditHeadsFileSchema = z.lazy(() =>
  z.strictObject({
    schema: z.literal('fleet.audit-heads/v1'),
    /**
     * By fleet repository (its real path), then by host: a host name means one node only within
     * one repository (two labs both have a `node-01`).
     */
    repos: z.record(
      z.string(),
      z.record(z.string(), z.array(seenHeadSchema).max(MAX_HEADS_PER_HOST)),
    ),
  }),
);
export type AuditHeadsFile = z.infer<typeof auditHeadsFileSchema>;

/** The heads kept for one host of one repository (oldest first). */
export function seenHeadsOf(file: AuditHeadsFile, repo: string, host: string): SeenHead[] {
  return [...(file.repos[repo]?.[host] ?? [])];
}

/** `<seq>:<sha256>` as a controller sends it; `undefined` for anything else. */
export function parseAuditHeadHeader(value: string | string[] | undefined): AuditHead | undefined {
  return parseAuditHead((Array.isArray(value) ? value[0] : value) ?? '');
}

/**
 * Adds one seen head to a host's list (pure): nothing when it is kept already; past the bound,
 * every other head is dropped (the first and the newest always stay), so what is kept stays
 * spread over the whole stretch since the last verify.
 */
export function addSeenHead(list: readonly SeenHead[], head: SeenHead): SeenHead[] {
  if (list.some((kept) => kept.seq === head.seq && kept.sha256 === head.sha256)) return [...list];
  return thinned([...list, head]);
}

/** Past the bound, every other head dropped (the first and the newest stay) until within it. */
function thinned(list: SeenHead[]): SeenHead[] {
  let out = list;
  while (out.length > MAX_HEADS_PER_HOST) {
    out = out.filter((_, index) => index === 0 || index === out.length - 1 || index % 2 === 0);
  }
  return out;
}

/**
 * The journal's entries added to the kept heads, oldest first, as {@link addSeenHead} adds them
 * (pure; in one pass, as a journal may hold a hundred heads per host for a thousand hosts).
 */
export function foldJournal(
  hosts: Readonly<Record<string, SeenHead[]>>,
  entries: readonly AuditHeadsJournalEntry[],
): Record<string, SeenHead[]> {
  const lists = new Map<string, { list: SeenHead[]; keys: Set<string> }>();
  for (const entry of entries) {
    for (const [host, head] of Object.entries(entry.heads)) {
      let kept = lists.get(host);
      if (kept === undefined) {
        const list = [...(hosts[host] ?? [])];
        kept = { list, keys: new Set(list.map(formatAuditHead)) };
        lists.set(host, kept);
      }
      // Each head once, even from a journal folded twice (a crash before its removal).
      const key = formatAuditHead(head);
      if (kept.keys.has(key)) continue;
      kept.keys.add(key);
      kept.list.push({
        seq: head.seq,
        sha256: head.sha256,
        seenAt: entry.seenAt,
        verb: entry.verb,
      });
      if (kept.list.length > MAX_HEADS_PER_HOST) kept.list = thinned(kept.list);
    }
  }
  const out = { ...hosts };
  for (const [host, { list }] of lists) out[host] = list;
  return out;
}

/**
 * What a change to one repository's heads must be, as the file's schema says, with each head
 * checked unless it is one of `read` — the heads just parsed from the file, by identity (contract
 * §14: a fleet of 1,000 hosts keeps up to 64 heads each, and every verb would check them all twice).
 */
export function changedHostsSchema(read: ReadonlySet<SeenHead>) {
  const head = z.custom<SeenHead>(
    (value) => read.has(value as SeenHead) || seenHeadSchema.safeParse(value).success,
    'not a head fleet keeps',
  );
  return z.record(z.string(), z.array(head).max(MAX_HEADS_PER_HOST));
}

/** Heads observed by clients of this process, by host, not yet recorded (see takeObservedHeads). */
const observed = new Map<string, AuditHead>();

/** Called by the client on every answer carrying a head. */
export function observeAuditHead(host: string, head: AuditHead): void {
  const known = observed.get(host);
  if (known === undefined || head.seq >= known.seq) observed.set(host, head);
}

/** The heads observed since the last call, by host; the process forgets them. */
export function takeObservedHeads(): Map<string, AuditHead> {
  const out = new Map(observed);
  observed.clear();
  return out;
}
