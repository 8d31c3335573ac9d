/**
 * `fleet audit verify --home DIR --repair` (docs/audit-log.md, "What an operator does"): a node
 * whose audit chain is broken refuses writes until an operator acts. Repair never edits a record:
 * it seals the whole broken log — every segment and the controller's head file — into
 * `audit-sealed-<ts>/` beside it, untouched, and starts a new chain whose first record names what
 * was sealed and the sha256 of each file. The break stays visible: the sealed files are kept, and
 * an operator holding earlier heads of this node sees the new chain reported as rewritten until
 * they accept it (`fleet audit verify --host H --accept-current`).
 *
 * Only with the node's controller stopped: it holds the active segment open.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import * as core from '@fleet/core';
import { nodeStateDir } from './log.js';

export interface RepairResult {
  readonly repaired: boolean;
  /** The directory the broken log was sealed into (`~/.local/state/fleet/audit-sealed-<ts>`). */
  readonly sealedInto: string | null;
  readonly sealed: readonly string[];
  readonly detail: string;
}

const SEALED_FILES = /^(audit\.jsonl|audit\.\d{12}\.jsonl|audit\.jsonl\.next|audit\.head\.json)$/;

function stamp(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

async function controllerPid(dir: string): Promise<number | null> {
  const text = await readFile(join(dir, 'controller.pid'), 'utf8').catch(() => '');
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

async function fsyncDir(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Seals the broken log of `home` aside and starts a new chain. `firstProblem` is what verify
 * found (it goes into the new chain's first record).
 */
export async function repairHomeLog(
  home: string,
  firstProblem: string,
  now: Date = new Date(),
): Promise<RepairResult> {
  const dir = nodeStateDir(home);
  const pid = await controllerPid(dir);
  if (pid !== null) {
    throw new core.FleetError(
      'LOCKED',
      `a controller (pid ${pid}) serves ${home}: stop it before --repair (it holds the log open)`,
    );
  }
  const names = (await readdir(dir)).filter((name) => SEALED_FILES.test(name)).sort();
  const into = `audit-sealed-${stamp(now)}`;
  await mkdir(join(dir, into), { mode: 0o700 });
  const files = [];
  for (const name of names) {
    const sha256 = createHash('sha256')
      .update(await readFile(join(dir, name)))
      .digest('hex');
    await rename(join(dir, name), join(dir, into, name));
    files.push({
      path: `~/.local/state/fleet/${into}/${name}`,
      beforeSha256: sha256,
      afterSha256: null,
      backupPath: null,
    });
  }
  await fsyncDir(join(dir, into));
  const record = core.auditRecordSchema.parse({
    seq: 1,
    ts: now.toISOString(),
    prev: core.AUDIT_GENESIS,
    operationId: null,
    client: null,
    operation: 'audit.repair',
    paths: [],
    files,
    outcome: 'recovered',
    code: null,
    detail: `a broken audit log (${firstProblem.slice(0, 300)}) was sealed into ${into}/ (${names.length} file(s)); a new chain starts here`,
  });
  const handle = await open(join(dir, core.AUDIT_ACTIVE_SEGMENT), 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(record)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsyncDir(dir);
  return {
    repaired: true,
    sealedInto: join(dir, into),
    sealed: names,
    detail: `sealed ${names.length} file(s) into ${join(dir, into)}; a new chain starts with an audit.repair record`,
  };
}
