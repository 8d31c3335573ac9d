/**
 * The I/O of the report chains (docs/scheduled-reports.md "Reports as evidence"; the pure half is
 * chain.ts): reading the reports folder, keeping each chain's head, and writing a report set as
 * the next link. The head lives in the operator's state directory, `$XDG_STATE_HOME/fleet/
 * report-heads/<sha256 of the repository's real path>.json` (0600 in a 0700 directory), beside
 * the audit heads (core's client/audit-heads.ts) and outside the repository: whoever can edit
 * the reports folder must also forge this file to hide a deleted newest report.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, readdir, realpath, rename, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, sep } from 'node:path';
import * as z from '@fleet/core/zod';
import {
  FleetError,
  operatorStateDir,
  parseStrictJson,
  reportChainSchema,
  sha256Schema,
  writeReportSet,
  type ReportChain,
  type ReportChainSchedule,
} from '@fleet/core';
import {
  nextLink,
  verifyReportChain,
  type ChainHead,
  type ChainVerdict,
  type ReportEntry,
} from './chain.js';

export const REPORT_HEADS_DIR = 'report-heads';
const HEADS_SCHEMA = 'fleet.report-heads/v1';

const chainHeadSchema = z.strictObject({
  seq: z.number().int().positive(),
  file: z.string().min(1).max(4096),
  sha256: sha256Schema,
  generatedAt: z.string(),
});

const reportHeadsSchema = z.strictObject({
  schema: z.literal(HEADS_SCHEMA),
  /** The repository's real path: a file that names another is refused. */
  repo: z.string(),
  chains: z.strictObject({
    drift: chainHeadSchema.optional(),
    version: chainHeadSchema.optional(),
  }),
});
type ReportHeads = z.infer<typeof reportHeadsSchema>;

export interface ChainEnv {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly home?: string;
}

/** The heads file of the repository at `repo` (its real path). */
export function reportHeadsPath(repo: string, options: ChainEnv = {}): string {
  const name = createHash('sha256').update(repo).digest('hex').slice(0, 32);
  const state = operatorStateDir(options.env ?? process.env, options.home ?? homedir());
  return join(state, REPORT_HEADS_DIR, `${name}.json`);
}

/** The kept heads of one repository (none kept: no chains). Malformed: an error naming the file. */
export async function readReportHeads(repo: string, options: ChainEnv = {}): Promise<ReportHeads> {
  const path = reportHeadsPath(repo, options);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { schema: HEADS_SCHEMA, repo, chains: {} };
    }
    throw error;
  }
  const parsed = reportHeadsSchema.safeParse(parseStrictJson(text, path, 'USAGE'));
  if (!parsed.success || parsed.data.repo !== repo) {
    throw new FleetError('USAGE', `${path} is not the report heads fleet wrote for ${repo}`, {
      suggestions: [
        `investigate it; to hold the chains to the folder as it is: fleet schedule verify --accept-current`,
      ],
    });
  }
  return parsed.data;
}

/** Sets (or, `null`, forgets) one chain's head: a temp file fsync'd and renamed over the old. */
export async function writeReportHead(
  repo: string,
  schedule: ReportChainSchedule,
  head: ChainHead | null,
  options: ChainEnv = {},
): Promise<string> {
  const path = reportHeadsPath(repo, options);
  const dir = join(path, '..');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const heads = await readReportHeads(repo, options).catch(() => ({
    schema: HEADS_SCHEMA,
    repo,
    chains: {},
  }));
  const chains: ReportHeads['chains'] = { ...heads.chains };
  if (head === null) delete chains[schedule];
  else chains[schedule] = head;
  const temp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify({ schema: HEADS_SCHEMA, repo, chains }, null, 2)}\n`);
    await handle.sync();
    await handle.close();
    await rename(temp, path);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  return path;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A regular file's bytes, never through a symbolic link (a link planted in the folder is no
 * report); `null` when absent or not a regular file.
 */
async function readRegular(path: string): Promise<Buffer | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    if (!(await handle.stat()).isFile()) return null;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Every `<schedule>[-N].json` under `reports/<schedule>/<YYYY-MM-DD>/`, read for the chain. */
export async function readReportEntries(
  root: string,
  schedule: ReportChainSchedule,
): Promise<ReportEntry[]> {
  const base = join(root, 'reports', schedule);
  const name = new RegExp(`^${schedule}(?:-[1-9]\\d*)?\\.json$`);
  const days = (await readdir(base).catch(() => [] as string[])).filter((d) => DAY.test(d)).sort();
  const entries: ReportEntry[] = [];
  for (const day of days) {
    const names = (await readdir(join(base, day)).catch(() => [] as string[])).sort();
    for (const file of names.filter((n) => name.test(n))) {
      const path = join(base, day, file);
      const bytes = await readRegular(path);
      if (bytes === null) continue;
      const { chain, generatedAt } = chainOf(bytes);
      const companions: Record<string, string | null> = {};
      for (const ext of Object.keys(chain?.companions ?? {})) {
        const companion = await readRegular(path.replace(/\.json$/, `.${ext}`));
        companions[ext] = companion === null ? null : sha256(companion);
      }
      const rel = relative(root, path).split(sep).join('/');
      entries.push({ file: rel, sha256: sha256(bytes), generatedAt, chain, companions });
    }
  }
  return entries;
}

/** A report's link and date; none when it has no valid `chain` (before the chain) or is no JSON. */
function chainOf(bytes: Buffer): { chain: ReportChain | null; generatedAt: string | null } {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { chain: null, generatedAt: null };
  }
  if (typeof value !== 'object' || value === null) return { chain: null, generatedAt: null };
  const record = value as { chain?: unknown; generatedAt?: unknown };
  const parsed = reportChainSchema.safeParse(record.chain);
  const generatedAt = typeof record.generatedAt === 'string' ? record.generatedAt : null;
  return { chain: parsed.success ? parsed.data : null, generatedAt };
}

export interface ChainedReportInput {
  readonly root: string;
  readonly schedule: ReportChainSchedule;
  /** The dated folder the set goes into (`reports/<schedule>/<YYYY-MM-DD>`). */
  readonly dir: string;
  /** The report document as the verb returned it, and its rendered companions. */
  readonly report: { readonly generatedAt: string } & Record<string, unknown>;
  readonly companions: { readonly md: string; readonly html: string };
}

export interface ChainedReport {
  readonly files: readonly string[];
  readonly chain: ReportChain;
  readonly head: ChainHead;
}

/**
 * Writes a report set as the next link of its schedule's chain and moves the kept head to it,
 * under a lock per chain (two runs of one schedule would otherwise both link to one head).
 */
export async function writeChainedReport(
  input: ChainedReportInput,
  options: ChainEnv = {},
): Promise<ChainedReport> {
  const repo = await realpath(input.root);
  const release = await lockChain(repo, input.schedule, options);
  try {
    const heads = await readReportHeads(repo, options);
    const entries = await readReportEntries(repo, input.schedule);
    const companions = {
      md: sha256(Buffer.from(input.companions.md)),
      html: sha256(Buffer.from(input.companions.html)),
    };
    const chain = nextLink(
      input.schedule,
      heads.chains[input.schedule] ?? null,
      entries,
      companions,
    );
    const json = `${JSON.stringify({ ...input.report, chain }, null, 2)}\n`;
    const files = await writeReportSet(input.dir, input.schedule, {
      json,
      md: input.companions.md,
      html: input.companions.html,
    });
    const jsonFile = files[0] ?? '';
    const head: ChainHead = {
      seq: chain.seq,
      file: relative(input.root, jsonFile).split(sep).join('/'),
      sha256: sha256(Buffer.from(json)),
      generatedAt: input.report.generatedAt,
    };
    await writeReportHead(repo, input.schedule, head, options);
    return { files, chain, head };
  } finally {
    await release();
  }
}

/** An exclusive lock file per chain; one left by a process that is gone is taken over. */
async function lockChain(
  repo: string,
  schedule: ReportChainSchedule,
  options: ChainEnv,
): Promise<() => Promise<void>> {
  const path = reportHeadsPath(repo, options).replace(/\.json$/, `.${schedule}.lock`);
  await mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt += 1) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => unlink(path).catch(() => undefined);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (attempt === 0 && !alive(pid)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      throw new FleetError(
        'LOCKED',
        `another run of the ${schedule} report holds ${path} (pid ${pid || '?'}): nothing was written`,
      );
    }
  }
}

function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface VerifyReportsResult {
  readonly repo: string;
  readonly headsFile: string;
  readonly chains: readonly ChainVerdict[];
  /** With `acceptCurrent`: the chains whose head was moved (or forgotten: no chained report). */
  readonly accepted: readonly ReportChainSchedule[];
}

/**
 * `fleet schedule verify`: each schedule's reports held against its kept head. `acceptCurrent`
 * (after investigating a flagged head) first holds each chain to the newest chained report the
 * folder has — a break further back stays reported: a link is evidence, never rewritten.
 */
export async function verifyReports(
  root: string,
  schedules: readonly ReportChainSchedule[],
  acceptCurrent: boolean,
  options: ChainEnv = {},
): Promise<VerifyReportsResult> {
  const repo = await realpath(root);
  const chains: ChainVerdict[] = [];
  const accepted: ReportChainSchedule[] = [];
  for (const schedule of schedules) {
    const entries = await readReportEntries(repo, schedule);
    if (acceptCurrent) {
      const found = verifyReportChain(schedule, entries, null);
      const head = found.head;
      const kept = (await readReportHeads(repo, options).catch(() => null))?.chains[schedule];
      if (head?.sha256 !== kept?.sha256) {
        await writeReportHead(repo, schedule, head, options);
        accepted.push(schedule);
      }
    }
    const heads = await readReportHeads(repo, options);
    chains.push(verifyReportChain(schedule, entries, heads.chains[schedule] ?? null));
  }
  return { repo, headsFile: reportHeadsPath(repo, options), chains, accepted };
}

/** Exit 0 when every chain is intact or has no report yet; 6 when any is broken or unanchored. */
export function verifyReportsExitCode(chains: readonly ChainVerdict[]): number {
  return chains.some((c) => c.status === 'broken' || c.status === 'unanchored') ? 6 : 0;
}
