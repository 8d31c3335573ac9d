/**
 * The lab's recorded state: `lab.json` (what `lab up` made) and each node's `supervisor.json`
 * (what its supervisor runs now). Both are replaced atomically (temp file + rename), so a reader —
 * `lab down`, a test, a script polling for readiness — never sees half a document.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FleetError, labDocumentSchema, parseStrictJson, type LabDocument } from '@fleet/core';
import { labSupervisorStateSchema, type LabSupervisorState } from './supervisor-protocol.js';

/** Writes `value` as JSON to `path` atomically, with `mode`. */
export async function writeJsonAtomic(path: string, value: unknown, mode = 0o644): Promise<void> {
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode, flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseStrictJson(text, path, 'REPO_INVALID');
}

/** `supervisor.json`, or `undefined` when there is none (or it does not parse: a torn write is never left by the atomic writer, so that is someone else's file). */
export async function readSupervisorState(path: string): Promise<LabSupervisorState | undefined> {
  let value: unknown;
  try {
    value = await readJson(path);
  } catch {
    return undefined;
  }
  const parsed = labSupervisorStateSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export async function writeSupervisorState(path: string, state: LabSupervisorState): Promise<void> {
  await writeJsonAtomic(path, state);
}

/** `lab.json`; `undefined` when absent; `REPO_INVALID` (exit 2) when it is not a lab document. */
export async function readLabDocument(path: string): Promise<LabDocument | undefined> {
  const value = await readJson(path);
  if (value === undefined) return undefined;
  const parsed = labDocumentSchema.safeParse(value);
  if (!parsed.success) throw new FleetError('REPO_INVALID', `${path} is not a lab document`);
  return parsed.data;
}
