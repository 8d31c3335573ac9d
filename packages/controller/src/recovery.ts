/**
 * Startup recovery (contract §15, catalogue 21–23): an operation a crash interrupted is found from
 * its journal and closed — its temp files swept, the live state of each file it was writing
 * observed (wholly old, wholly new, or changed by someone else), an `interrupted` audit record
 * appended and a status record written, so the next status query tells the truth. An operation
 * whose audit record was already written is only completed. Nothing is rolled back or re-run
 * automatically: a coupled action that may not have run is reported as `needsAction`.
 */
import { lstat, readdir, unlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isFleetError } from '@fleet/core/node';
import type { AuditEntry } from './audit/entry.js';
import { withAudit } from './handlers/receipt.js';
import { managedTarget } from './fs/managed-target.js';
import { readLive, walkParents } from './fs/safe-path.js';
import type { JournalEvent } from './operations.js';
import type { AuditHead, RecoveryFile } from '@fleet/core/node';
import { processAlive } from './process-alive.js';
import { stateTempWriter, TEMP_PREFIX } from './state-paths.js';
import { settlePending, type PendingOperation } from './settle-pending.js';
import type { RecoveryInput } from './recovery-input.js';

export type { RecoveryInput } from './recovery-input.js';

export interface RecoveryReport {
  readonly interrupted: number;
  readonly completed: number;
  readonly swept: number;
  readonly detail: string;
  /**
   * Operations answered before a restart that this controller's `--node-id` satisfies: settled
   * as verified once it accepts requests (a start that fails before that leaves them pending).
   */
  readonly awaitingStart?: readonly string[];
}

/** Removes the controller's temp files (regular files with its prefix) in one directory. */
async function sweepDir(dir: string): Promise<number> {
  return sweepTemps(dir, (name) => name.startsWith(TEMP_PREFIX));
}

/**
 * The state directories' temp files, but not one whose writer still runs: `fleet token issue
 * --home` may be replacing tokens.json while this controller starts (its temp names its pid).
 */
async function sweepStateDir(dir: string): Promise<number> {
  return sweepTemps(dir, (name) => {
    if (!name.startsWith(TEMP_PREFIX)) return false;
    const writer = stateTempWriter(name);
    return writer === null || writer === process.pid || !processAlive(writer);
  });
}

/** Removes the regular files in `dir` whose names `sweepable` picks; returns how many. */
async function sweepTemps(dir: string, sweepable: (name: string) => boolean): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let swept = 0;
  for (const name of names) {
    if (!sweepable(name)) continue;
    const path = join(dir, name);
    try {
      if (!(await lstat(path)).isFile()) continue;
      await unlink(path);
      swept += 1;
    } catch {
      // gone already, or not ours to remove
    }
  }
  return swept;
}

/**
 * Sweeps every managed directory (walked safely: never through a symlink) and the state dirs: the
 * directories of the served domains' declared paths, of the targets of managed files linked into a
 * `symlinkInto` directory, and of every path an interrupted operation was writing (a per-host
 * override the policy lists): a temp file is always created in its target's own directory.
 */
async function sweepAll(input: RecoveryInput, pending: readonly string[]): Promise<number> {
  const dirs = new Set<string>();
  const paths = new Set(input.allowlist.all().map((entry) => entry.path));
  for (const id of pending) {
    // An unreadable journal is closed below (closeUnreadable); its paths are not swept blind.
    const events = await input.operations.readJournal(id).catch(() => null);
    for (const event of events ?? []) {
      if (event.event === 'write') paths.add(event.path);
    }
  }
  for (const path of paths) {
    try {
      const target = await managedTarget(input.home, path, input.allowlist.symlinkDirs);
      const chain = await walkParents(input.home, target, { create: false });
      if (chain.complete) dirs.add(target.parent);
    } catch {
      // a parent that is a symlink or not a directory: nothing of ours can be in there
    }
  }
  let swept = 0;
  for (const dir of dirs) swept += await sweepDir(dir);
  for (const dir of [input.state.root, input.state.journal, input.state.operations]) {
    swept += await sweepStateDir(dir);
  }
  return swept;
}

async function observe(
  input: RecoveryInput,
  events: readonly JournalEvent[],
): Promise<RecoveryFile[]> {
  const files: RecoveryFile[] = [];
  for (const event of events) {
    if (event.event !== 'write') continue;
    let liveSha256: string | null = null;
    let matches: RecoveryFile['matches'];
    try {
      const live = await readLive(
        input.home,
        await managedTarget(input.home, event.path, input.allowlist.symlinkDirs),
        input.maxFileBytes,
      );
      liveSha256 = live?.sha256 ?? null;
      matches =
        liveSha256 === event.afterSha256
          ? 'after'
          : liveSha256 === event.beforeSha256
            ? 'before'
            : 'neither';
    } catch {
      matches = 'unknown';
    }
    files.push({ path: event.path, liveSha256, matches });
  }
  return files;
}

/**
 * An operation whose journal cannot be trusted (catalogue 46): nothing is observed, restored or
 * re-run. It is closed as `interrupted` with `RECOVERY_REQUIRED` and `needsAction`, audited, and
 * its journal kept aside for the operator (`journal/<id>.jsonl.unreadable`).
 */
async function closeUnreadable(input: RecoveryInput, id: string, message: string): Promise<void> {
  const aside = await input.operations.setJournalAside(id);
  const detail = `${message} (kept as ~/${relative(input.home, aside).split(sep).join('/')})`;
  await input.audit.append({
    operationId: id,
    client: null,
    operation: 'install',
    paths: [],
    files: [],
    outcome: 'interrupted',
    code: 'RECOVERY_REQUIRED',
    detail,
  });
  const now = input.now().toISOString();
  await input.operations.finish({
    operationId: id,
    operation: 'install',
    state: 'interrupted',
    startedAt: now,
    finishedAt: now,
    error: { code: 'RECOVERY_REQUIRED', message: detail },
    recovery: { detail, needsAction: true, files: [] },
    requestSha256: '0'.repeat(64),
    client: null,
    httpStatus: 503,
  });
}

type BeginEvent = Extract<JournalEvent, { event: 'begin' }>;
type OutcomeEvent = Extract<JournalEvent, { event: 'outcome' }>;

/** What closing one pending operation came to: the report counts each kind. */
type Closed = 'interrupted' | 'completed' | 'awaiting-start';

/** The first event of a kind in an operation's journal. */
function firstEvent<K extends JournalEvent['event']>(
  events: readonly JournalEvent[],
  kind: K,
): Extract<JournalEvent, { event: K }> | undefined {
  return events.find((e): e is Extract<JournalEvent, { event: K }> => e.event === kind);
}

/**
 * What an interrupted operation's status and audit record say of it, pure: each file's side of
 * the write, and whether a coupled action may not have run.
 */
export function interruptionDetail(files: readonly RecoveryFile[], needsAction: boolean): string {
  const summary =
    files.length === 0
      ? 'interrupted before any file was written'
      : files
          .map(
            (file) =>
              `${file.path}: ${file.matches === 'after' ? 'new content' : file.matches === 'before' ? 'old content' : file.matches}`,
          )
          .join('; ');
  return `controller restarted: ${summary}${needsAction ? '; coupled actions may not have run (needs action)' : ''}`;
}

/** The writes a journal recorded, as the audit record lists them. */
function journaledWrites(events: readonly JournalEvent[]): AuditEntry['files'] {
  return events.flatMap((e) =>
    e.event === 'write'
      ? [
          {
            path: e.path,
            beforeSha256: e.beforeSha256,
            afterSha256: e.afterSha256,
            backupPath: e.backupPath,
          },
        ]
      : [],
  );
}

/**
 * An install answered before a coupled restart of this controller (settle-pending.ts): awaiting
 * the start when this controller has the expected node id, settled (rolled back) now otherwise.
 * `null` when no answered receipt is left to settle it from.
 */
async function closePendingRestart(
  input: RecoveryInput,
  nodeId: string,
  operation: Omit<PendingOperation, 'template'>,
  outcome: OutcomeEvent | undefined,
): Promise<Closed | null> {
  const template = outcome?.receipt ?? (await input.operations.get(operation.id))?.receipt;
  if (template === undefined) return null;
  // Settled as verified only once this controller serves (settleAfterStart).
  if (nodeId === operation.pending.expect.nodeId) return 'awaiting-start';
  // Rolled back now: the files go back before the identity check and the first request.
  await settlePending(input, { ...operation, template });
  return 'completed';
}

/** Audited before the crash: only the status record was missing. */
async function completeAudited(
  input: RecoveryInput,
  id: string,
  begin: BeginEvent,
  outcome: OutcomeEvent,
  head: AuditHead,
): Promise<void> {
  if ((await input.operations.get(id)) === undefined) {
    await input.operations.finish({
      operationId: id,
      operation: begin.operation,
      state: outcome.state,
      startedAt: begin.startedAt,
      finishedAt: outcome.finishedAt,
      ...(outcome.receipt ? { receipt: withAudit(outcome.receipt, head) } : {}),
      ...(outcome.error && !outcome.receipt ? { error: outcome.error } : {}),
      requestSha256: begin.requestSha256 ?? '0'.repeat(64),
      client: begin.client,
      httpStatus: outcome.httpStatus,
    });
  } else {
    await input.operations.dropJournal(id);
  }
}

/** Never audited: each file's side of the write observed, then an `interrupted` record and status. */
async function closeInterrupted(
  input: RecoveryInput,
  id: string,
  events: readonly JournalEvent[],
  begin: BeginEvent | undefined,
): Promise<void> {
  const files = await observe(input, events);
  const renamed = events.some((e) => e.event === 'renamed');
  const coupled = begin?.domain
    ? input.allowlist.forDomain(begin.domain).some((entry) => entry.processCoupled)
    : false;
  const needsAction = renamed && coupled;
  const detail = interruptionDetail(files, needsAction);
  await input.audit.append({
    operationId: id,
    client: begin?.client ?? null,
    operation: begin?.operation ?? 'install',
    paths: [...(begin?.paths ?? [])],
    files: journaledWrites(events),
    outcome: 'interrupted',
    code: null,
    detail,
  });
  await input.operations.finish({
    operationId: id,
    operation: begin?.operation ?? 'install',
    state: 'interrupted',
    startedAt: begin?.startedAt ?? input.now().toISOString(),
    finishedAt: input.now().toISOString(),
    recovery: { detail, needsAction, files },
    requestSha256: begin?.requestSha256 ?? '0'.repeat(64),
    client: begin?.client ?? null,
    httpStatus: 409,
  });
}

/** Closes one operation a crash left journaled; `head` is its final audit record, if written. */
async function recoverOperation(
  input: RecoveryInput,
  id: string,
  head: AuditHead | undefined,
): Promise<Closed> {
  let events: JournalEvent[];
  try {
    events = (await input.operations.readJournal(id)) ?? [];
  } catch (error) {
    if (!isFleetError(error) || error.code !== 'RECOVERY_REQUIRED') throw error;
    await closeUnreadable(input, id, error.message);
    return 'interrupted';
  }
  const begin = firstEvent(events, 'begin');
  const outcome = firstEvent(events, 'outcome');
  const pending = firstEvent(events, 'pending');
  if (pending !== undefined && begin !== undefined && input.nodeId !== undefined) {
    const operation = { id, begin, events, pending };
    const closed = await closePendingRestart(input, input.nodeId, operation, outcome);
    if (closed !== null) return closed;
  }
  if (head !== undefined && outcome !== undefined && begin !== undefined) {
    await completeAudited(input, id, begin, outcome, head);
    return 'completed';
  }
  await closeInterrupted(input, id, events, begin);
  return 'interrupted';
}

export async function recoverAtStart(input: RecoveryInput): Promise<RecoveryReport> {
  const pending = await input.operations.pending();
  const swept = await sweepAll(input, pending);
  // A log that refuses writes cannot take their `interrupted` records (docs/audit-log.md): the
  // journals stay, to be closed at the first start after the log is repaired.
  if (pending.length > 0 && !input.audit.writable()) {
    return {
      interrupted: 0,
      completed: 0,
      swept,
      detail: `${pending.length} interrupted operation(s) left journaled: the audit log refuses writes; ${swept} temp file(s) swept`,
    };
  }
  let interrupted = 0;
  let completed = 0;
  const awaitingStart: string[] = [];
  const finals: Map<string, AuditHead> =
    pending.length > 0 ? await input.audit.finalRecords() : new Map<string, AuditHead>();
  for (const id of pending) {
    const closed = await recoverOperation(input, id, finals.get(id));
    if (closed === 'interrupted') interrupted += 1;
    else if (closed === 'completed') completed += 1;
    else awaitingStart.push(id);
  }
  const detail =
    pending.length === 0
      ? `clean start; ${swept} stale temp file(s) swept`
      : `${interrupted} interrupted and ${completed} unfinished operation(s) closed at start; ${swept} temp file(s) swept`;
  return { interrupted, completed, swept, detail, awaitingStart };
}
