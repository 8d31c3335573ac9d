/**
 * What fleet itself wrote on this node (contract §8.2, docs/classification.md): per managed path,
 * the sha256 of each content the controller's writer renamed into place, newest first — Debian
 * ucf's hashfile, kept deeper. The operator counts these contents as known versions of the file
 * (an install made from a branch or from a commit later amended is still fleet's own), and a path
 * with a record whose file is gone is `deleted`, not `missing`.
 *
 * `~/.local/state/fleet/written.json` (0600 in the 0700 state directory), replaced atomically and
 * durably at each change, never followed through a symlink, refused when it is not private or does
 * not validate (`RECOVERY_REQUIRED`: fleet cannot then tell its own writes from a hand change, so
 * it says so instead of guessing). Changes are serialised in-process per state file; only the
 * controller writes it.
 *
 * Bound: {@link MAX_WRITES_PER_PATH} distinct contents per path (ucf keeps one — the last — because
 * dpkg only ever compares with the previous package version; a fleet host also moves between
 * branches and amended commits, and a user may put back one of fleet's earlier writes from a
 * backup, of which 10 are kept per file by default: 32 covers three times that and keeps one path's
 * record under 5 KiB), and {@link MAX_PATHS} paths (the allowlist bounds them; the cap only
 * matters when the node policy's paths change many times). Oldest first out.
 *
 * A restore is not recorded: a backup's content was not written by fleet as a new version (it may
 * be a hand edit). The write the restore undoes is withdrawn, so a file an install created and
 * rolled back is `missing` afterwards, not `deleted`.
 */
import { constants } from 'node:fs';
import { open } from './fs/seam.js';
import * as z from '@fleet/core/zod';
import {
  FleetError,
  MAX_WRITES_PER_PATH,
  fileStamp,
  homePathSchema,
  observedModeSchema,
  operationIdSchema,
  parseStrictJson,
  sha256Schema,
  timestampSchema,
  type SnapshotWrite,
} from '@fleet/core/node';
import { ensurePrivateDir, writeFileAtomic } from './fs/durable.js';
import { errnoOf } from './fs/errors.js';
import type { StatePaths } from './state-paths.js';

export { MAX_WRITES_PER_PATH };

/** Paths the record keeps at most (the least recently written path goes first). */
export const MAX_PATHS = 512;

const writeSchema = z.strictObject({
  sha256: sha256Schema,
  at: timestampSchema,
  operationId: operationIdSchema,
  /** The permission bits the content was written with (none on Windows, nor in older records). */
  mode: observedModeSchema.optional(),
});

const recordSchema = z.strictObject({
  version: z.literal(1),
  paths: z.record(homePathSchema, z.array(writeSchema).max(MAX_WRITES_PER_PATH)),
});

type Record_ = z.infer<typeof recordSchema>;

/** Every path's writes, newest first. */
export type WrittenRecord = ReadonlyMap<string, readonly SnapshotWrite[]>;

function unusable(why: string, cause?: unknown): FleetError {
  return new FleetError(
    'RECOVERY_REQUIRED',
    `the node's record of fleet's own writes (~/.local/state/fleet/written.json) ${why}: fleet cannot tell its own writes from hand changes until it is fixed`,
    {
      cause,
      suggestions: [
        'move ~/.local/state/fleet/written.json aside on the node: files fleet wrote become unknown versions (refused, never overwritten, until installed again)',
      ],
    },
  );
}

async function readRecord(state: StatePaths): Promise<Record_> {
  let text: string;
  try {
    const handle = await open(state.written, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw unusable('is not a regular file');
      if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
        throw unusable(`is open to others (mode ${(stats.mode & 0o777).toString(8)}, must be 600)`);
      }
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return { version: 1, paths: {} };
    if (error instanceof FleetError) throw error;
    throw unusable(`cannot be read (${errnoOf(error) ?? 'error'})`, error);
  }
  let value: unknown;
  try {
    value = parseStrictJson(text, 'written.json', 'RECOVERY_REQUIRED');
  } catch (error) {
    throw unusable('is not valid JSON', error);
  }
  const parsed = recordSchema.safeParse(value);
  if (!parsed.success) throw unusable('does not have the expected shape');
  return parsed.data;
}

/**
 * The last record each state file was parsed into, with the stamp of the file it was read from
 * (contract §14: every snapshot asks for the record, and it changes only when fleet writes).
 * Safe to answer from: the stamp is the name's {@link fileStamp} (mode, device, inode, size,
 * modification and change times), taken before the read and again after it (kept only when both
 * agree), so a rename over the file (another inode), any write (the change time moves even when
 * the modification time is put back) or a chmod (the mode) makes another stamp and the
 * file is read, checked and parsed again. A symbolic link put in its place has a stamp of its own
 * and is refused by the read, as before. The record is never handed out for changing.
 */
const parsedRecords = new Map<string, { readonly stamp: string; readonly record: WrittenRecord }>();

/** The stamp of the name `path` (not followed), or `null` when there is nothing there. */
function stampOf(path: string): string | null {
  try {
    return fileStamp(path, { follow: false });
  } catch (error) {
    return `unreadable:${errnoOf(error) ?? 'error'}`; // read again: the read says what is wrong
  }
}

/** Every path's writes, newest first (an empty map when fleet never wrote on this node). */
export async function readWritten(state: StatePaths): Promise<WrittenRecord> {
  const before = stampOf(state.written);
  if (before === null) return new Map();
  const kept = parsedRecords.get(state.written);
  if (kept !== undefined && kept.stamp === before) return kept.record;
  const record: WrittenRecord = new Map(Object.entries((await readRecord(state)).paths));
  if (!before.startsWith('unreadable:') && stampOf(state.written) === before) {
    parsedRecords.set(state.written, { stamp: before, record });
  } else parsedRecords.delete(state.written);
  return record;
}

const queues = new Map<string, Promise<unknown>>();

/** Runs `change` on the record under an in-process queue per state file, then stores it. */
async function mutate(state: StatePaths, change: (record: Record_) => boolean): Promise<void> {
  const previous = queues.get(state.written) ?? Promise.resolve();
  const next = previous
    .catch(() => undefined)
    .then(async () => {
      const record = await readRecord(state);
      if (!change(record)) return;
      await ensurePrivateDir(state.home, state.root);
      await writeFileAtomic(state.written, `${JSON.stringify(record)}\n`);
    });
  queues.set(state.written, next);
  try {
    await next;
  } finally {
    if (queues.get(state.written) === next) queues.delete(state.written);
  }
}

/**
 * Records that the writer renamed content with `sha256` into place at `path`, with the mode it
 * wrote. A content already recorded moves to the front and keeps the time and operation that first
 * wrote it; its mode becomes this write's.
 */
export async function recordWrite(
  state: StatePaths,
  path: string,
  write: SnapshotWrite,
): Promise<void> {
  await mutate(state, (record) => {
    const old = record.paths[path] ?? [];
    const earlier = old.find((entry) => entry.sha256 === write.sha256);
    // The mode is the last one fleet wrote the content with: a chmod by fleet (a repository's mode
    // change) rewrites the content with the new mode, and a hand chmod is told by it (§10.4).
    const kept = earlier === undefined ? write : withMode(earlier, write.mode);
    const entries = [kept, ...old.filter((entry) => entry.sha256 !== write.sha256)];
    delete record.paths[path];
    record.paths[path] = entries.slice(0, MAX_WRITES_PER_PATH);
    // Insertion order is recency: the least recently written paths go first.
    const paths = Object.keys(record.paths);
    for (const stale of paths.slice(0, Math.max(0, paths.length - MAX_PATHS))) {
      delete record.paths[stale];
    }
    return true;
  });
}

function withMode(write: SnapshotWrite, mode: string | undefined): SnapshotWrite {
  const { mode: _earlier, ...rest } = write;
  return mode === undefined ? rest : { ...rest, mode };
}

/** Withdraws the write operation `operationId` made at `path` (its restore undid it). */
export async function forgetWrite(
  state: StatePaths,
  path: string,
  operationId: string,
): Promise<void> {
  await mutate(state, (record) => {
    const old = record.paths[path];
    if (old === undefined) return false;
    const kept = old.filter((entry) => entry.operationId !== operationId);
    if (kept.length === old.length) return false;
    if (kept.length === 0) delete record.paths[path];
    else record.paths[path] = kept;
    return true;
  });
}
