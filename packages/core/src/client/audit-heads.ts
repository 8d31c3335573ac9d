/**
 * The audit heads the operator has seen (contract §15, docs/audit-log.md): every authenticated
 * answer of a controller carries the node's durable audit head (`fleet-audit-head: <seq>:<sha256>`);
 * after each verb the heads it saw are kept per repository and host, one file per repository in
 * `audit-heads/` beside the operator log (`$XDG_STATE_HOME/fleet/`, 0600 files in a 0700
 * directory). `fleet audit verify --host H` holds the node's chain against every head kept for H: a
 * log rewritten behind the operator's back — consistent, restarted, but without a record the
 * operator saw — no longer contains one of them.
 *
 * One file per repository, not one for all (contract §14): every verb touches the heads of its own
 * repository only, so its cost follows the size of that fleet, never the number of repositories
 * and labs this operator ever used. A verb appends what it saw to the repository's journal
 * (audit-heads-journal.ts) instead of rewriting the file, so its cost follows what it saw, not
 * how many heads are kept. The single `audit-heads.json` of earlier versions
 * is still read for a repository that has no file of its own yet (its heads carry over when that
 * repository's file is first written); fleet no longer writes it.
 *
 * Only the heads seen since the last successful verify are kept (a verify collapses them to the
 * head it verified), at most `MAX_HEADS_PER_HOST` per host (see `addSeenHead`). This module is
 * the store on disk; the heads' shape, the rules of a host's list and the heads observed in
 * memory are seen-heads.ts.
 */
import { mkdir, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { FleetError } from '../errors.js';
import { parseStrictJson } from '../json.js';
import type { AuditHead } from '../wire/audit.js';
import {
  appendJournalLine,
  journalLine,
  parseJournal,
  type AuditHeadsJournalEntry,
} from './audit-heads-journal.js';
import { operatorStateDir } from './operator-log.js';
import {
  addSeenHead,
  auditHeadsFileSchema,
  changedHostsSchema,
  foldJournal,
  type AuditHeadsFile,
  type SeenHead,
} from './seen-heads.js';

/** The directory of the per-repository heads files, in the operator's state directory. */
export const AUDIT_HEADS_DIR = 'audit-heads';
/** The single heads file of earlier versions: read for a repository without a file of its own. */
export const AUDIT_HEADS_FILE = 'audit-heads.json';

export interface AuditHeadsOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly home?: string;
  readonly now?: () => Date;
}

function stateDir(options: AuditHeadsOptions): string {
  return operatorStateDir(options.env ?? process.env, options.home ?? homedir());
}

/**
 * The heads file of one fleet repository (its real path): named by the sha256 of that path, so no
 * repository path ever becomes a file name; the file names its repository inside, and a file that
 * names another one is refused.
 */
export function auditHeadsPath(repo: string, options: AuditHeadsOptions = {}): string {
  const name = createHash('sha256').update(repo).digest('hex').slice(0, 32);
  return join(stateDir(options), AUDIT_HEADS_DIR, `${name}.json`);
}

const EMPTY: AuditHeadsFile = { schema: 'fleet.audit-heads/v1', repos: {} };

/**
 * The digest of the bytes fleet last wrote to a heads file, kept apart from the heads (in
 * `audit-heads-digests/`, one `<name>.json.sha256` per heads file: the file's format and the
 * sha256 of its bytes). A heads file whose bytes have that digest is what fleet wrote from a value
 * that had passed the file's schema, so it is read with plain `JSON.parse`, without checking up to
 * 64 heads per host again (contract §14: ~0.2 s of every verb over 1,000 hosts with ten heads
 * each). Safe: any other byte — a hand edit, a torn or foreign file, a file another version
 * wrote — has another digest and is checked whole, as always; the digest sits in the same private
 * state directory as the heads it vouches for, so whoever could forge it could write the heads
 * themselves. Written after the heads file, without an fsync: a digest lost or left stale by a
 * crash only means one full check.
 */
export const AUDIT_HEADS_DIGESTS_DIR = 'audit-heads-digests';
const digestPathOf = (path: string): string =>
  join(dirname(dirname(path)), AUDIT_HEADS_DIGESTS_DIR, `${basename(path)}.sha256`);
const digestLine = (bytes: Uint8Array): string =>
  `${EMPTY.schema} ${createHash('sha256').update(bytes).digest('hex')}\n`;

async function readDigest(path: string): Promise<string | undefined> {
  try {
    return await readFile(digestPathOf(path), 'utf8');
  } catch {
    return undefined;
  }
}

/** A heads file as fleet wrote it; `undefined` when absent. Malformed: an error naming it. */
async function readHeadsFile(path: string): Promise<AuditHeadsFile | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const text = bytes.toString('utf8');
  const digest = await readDigest(path);
  if (digest !== undefined && digest === digestLine(bytes)) {
    return JSON.parse(text) as AuditHeadsFile;
  }
  const parsed = auditHeadsFileSchema.safeParse(parseStrictJson(text, path, 'USAGE'));
  if (!parsed.success) {
    throw new FleetError('USAGE', `${path} is not a file of audit heads fleet wrote`, {
      suggestions: [`move it aside to start keeping heads afresh: mv ${path} ${path}.bad`],
    });
  }
  return parsed.data;
}

/** Replaces `target` with `text` atomically (a temp file renamed over it), fsync'd when asked. */
async function replaceFile(
  dir: string,
  target: string,
  text: string | Uint8Array,
  sync: boolean,
): Promise<void> {
  const temp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    if (sync) await handle.sync();
    await handle.close();
    await rename(temp, target);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * The kept heads of one repository (none: an empty file), from its own file, else from the single
 * file of earlier versions. A malformed file, or one that names another repository, is an error
 * naming it, never guessed.
 */
export async function readAuditHeads(
  repo: string,
  options: AuditHeadsOptions = {},
): Promise<AuditHeadsFile> {
  const path = auditHeadsPath(repo, options);
  const [kept, journal] = await Promise.all([
    readKeptHeads(repo, path, options),
    readJournal(journalPathOf(path), repo),
  ]);
  if (journal.length === 0) return kept;
  return { ...EMPTY, repos: { [repo]: foldJournal(kept.repos[repo] ?? {}, journal) } };
}

/** The journal of heads seen since `path` was written (audit-heads-journal.ts). */
export const journalPathOf = (path: string): string => path.replace(/\.json$/, '.seen.jsonl');

/** The journal is folded into the heads file once larger than it, and than this. */
const FOLD_MIN_BYTES = 64 * 1024;

async function readJournal(path: string, repo: string): Promise<AuditHeadsJournalEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return parseJournal(text, path, repo);
}

/** The heads file's own content: the repository's file, else the single file of earlier versions. */
async function readKeptHeads(
  repo: string,
  path: string,
  options: AuditHeadsOptions,
): Promise<AuditHeadsFile> {
  const own = await readHeadsFile(path);
  if (own !== undefined) {
    const others = Object.keys(own.repos).filter((key) => key !== repo);
    if (others.length > 0) {
      throw new FleetError('USAGE', `${path} holds the audit heads of another repository`, {
        suggestions: [`move it aside to start keeping heads afresh: mv ${path} ${path}.bad`],
      });
    }
    return own;
  }
  const legacy = await readHeadsFile(join(stateDir(options), AUDIT_HEADS_FILE));
  const hosts = legacy?.repos[repo];
  return hosts === undefined ? EMPTY : { ...EMPTY, repos: { [repo]: hosts } };
}

/**
 * Reads (the file and its journal), changes and atomically replaces one repository's heads file
 * (0600 in a 0700 directory), then removes the journal it folded in. Two verbs racing may lose
 * one's update: that only drops heads, it never invents one.
 */
export async function updateAuditHeads(
  repo: string,
  change: (hosts: Readonly<Record<string, SeenHead[]>>) => Record<string, SeenHead[]>,
  options: AuditHeadsOptions = {},
): Promise<string> {
  const path = auditHeadsPath(repo, options);
  const dir = join(stateDir(options), AUDIT_HEADS_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const before = await readAuditHeads(repo, options);
  const kept = before.repos[repo] ?? {};
  const next: AuditHeadsFile = {
    ...EMPTY,
    repos: { [repo]: changedHostsSchema(new Set(Object.values(kept).flat())).parse(change(kept)) },
  };
  const text = Buffer.from(`${JSON.stringify(next, null, 1)}\n`, 'utf8');
  await replaceFile(dir, path, text, true);
  const digests = join(stateDir(options), AUDIT_HEADS_DIGESTS_DIR);
  await mkdir(digests, { recursive: true, mode: 0o700 })
    .then(() => replaceFile(digests, digestPathOf(path), digestLine(text), false))
    .catch(() => undefined);
  // Folded now. A crash before this leaves the journal to be folded again, which keeps no head
  // twice (one thinned out meanwhile may come back: only more is kept, never a head not seen).
  await unlink(journalPathOf(path)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  return path;
}

/**
 * Forgets the heads of repositories that no longer exist (a lab taken down, a clone removed): each
 * heads file names its repository. Run by `audit verify`, not by every verb (it reads every file).
 * A file that does not parse is left for the operator (the verbs of its repository name it).
 */
export async function forgetVanishedRepos(options: AuditHeadsOptions = {}): Promise<number> {
  const dir = join(stateDir(options), AUDIT_HEADS_DIR);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let forgotten = 0;
  for (const name of names.filter((n) => /^[0-9a-f]{32}\.json$/.test(n))) {
    const file = await readHeadsFile(join(dir, name)).catch(() => undefined);
    const repos = Object.keys(file?.repos ?? {});
    if (file === undefined || repos.length === 0) continue;
    const present = await Promise.all(repos.map(exists));
    if (present.some(Boolean)) continue;
    await unlink(join(dir, name)).catch(() => undefined);
    await unlink(journalPathOf(join(dir, name))).catch(() => undefined);
    await unlink(digestPathOf(join(dir, name))).catch(() => undefined);
    forgotten += 1;
  }
  return forgotten;
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Keeps the heads one verb saw, for the hosts of `repo`: one line appended to the repository's
 * journal, so a verb's cost follows what it saw, not how many heads are kept (contract §14). The
 * journal is folded into the heads file when there is no file yet (the first verb, which also
 * carries over the file of earlier versions) or the journal has outgrown it.
 */
export async function recordSeenHeads(
  repo: string,
  heads: ReadonlyMap<string, AuditHead>,
  verb: string,
  options: AuditHeadsOptions = {},
): Promise<void> {
  if (heads.size === 0) return;
  const seenAt = (options.now?.() ?? new Date()).toISOString();
  const path = auditHeadsPath(repo, options);
  const [kept, journal] = await Promise.all([sizeOf(path), sizeOf(journalPathOf(path))]);
  if (kept !== null && (journal ?? 0) < Math.max(FOLD_MIN_BYTES, kept)) {
    await appendJournalLine(journalPathOf(path), journalLine(repo, heads, seenAt, verb));
    return;
  }
  await updateAuditHeads(
    repo,
    (kept) => {
      const hosts = { ...kept };
      for (const [host, head] of heads) {
        hosts[host] = addSeenHead(hosts[host] ?? [], { ...head, seenAt, verb: verb.slice(0, 100) });
      }
      return hosts;
    },
    options,
  );
}

/** After a successful verify (or an accepted rewrite): each host's heads collapse to the one verified. */
export async function settleSeenHeads(
  repo: string,
  verified: ReadonlyMap<string, AuditHead | null>,
  verb: string,
  options: AuditHeadsOptions = {},
): Promise<void> {
  if (verified.size === 0) return;
  const seenAt = (options.now?.() ?? new Date()).toISOString();
  await updateAuditHeads(
    repo,
    (kept) => {
      const hosts = { ...kept };
      for (const [host, head] of verified) {
        if (head === null) delete hosts[host];
        else hosts[host] = [{ ...head, seenAt, verb: verb.slice(0, 100) }];
      }
      return hosts;
    },
    options,
  );
  await forgetVanishedRepos(options);
}
