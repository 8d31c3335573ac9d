/**
 * Where a transaction's new controller listens (issue 35 item 2), kept beside the journal as
 * `journal/listen-<txn>.json` rather than in its `begin` record: older generations read the
 * journal strictly (docs/runtime-lifecycle.md, "its schema is unchanged"), and a rollback runs
 * one, so a field added to `begin` would read as corruption there. Written durably (0600) right
 * after `begin` and before `staged`: the runner, which only ever carries a transaction at
 * `staged`, finds it whenever the stage carried a listen. Absent — an older operator, or a
 * transaction opened before this file existed — the runner keeps the flags of the installed unit.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  controllerListenSchema,
  FleetError,
  parseStrictJson,
  type ControllerListen,
} from '@fleet/core/node';
import { ensurePrivateDir, writeFileAtomic } from '../fs/durable.js';
import { statePaths } from '../state-paths.js';

export function listenRecordPath(home: string, transaction: string): string {
  return join(statePaths(home).journal, `listen-${transaction}.json`);
}

export async function writeListenRecord(
  home: string,
  transaction: string,
  listen: ControllerListen,
): Promise<void> {
  await ensurePrivateDir(home, statePaths(home).journal);
  await writeFileAtomic(listenRecordPath(home, transaction), `${JSON.stringify(listen)}\n`);
}

/** The transaction's listen, `null` when it has none; an unreadable record fails closed. */
export async function readListenRecord(
  home: string,
  transaction: string,
): Promise<ControllerListen | null> {
  const path = listenRecordPath(home, transaction);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new FleetError('IO_ERROR', `${path}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = controllerListenSchema.safeParse(parseStrictJson(text, path, 'IO_ERROR'));
  if (!parsed.success) {
    throw new FleetError('IO_ERROR', `${path} is not a listen record; nothing was installed`);
  }
  return parsed.data;
}
