/**
 * Appending to the node's audit log from outside the controller (docs/audit-log.md, "Writers"):
 * the SSH recovery receiver records its stage and activate — and their refusals — in the same
 * hash-chained log the controller writes, read by `fleet audit show` and verified by `fleet audit
 * verify`, whether or not a controller is running.
 *
 * Under the append lock (append-lock.ts) the whole log is read as the controller reads it at start
 * (segments.ts `inspectLog`: an interrupted rotation finished, a torn tail set aside, every segment
 * verified against the controller's head file); a broken log refuses the append, as it refuses
 * the controller's. The records go on from the verified head in one write, its byte count checked,
 * then fsync'd; on any failure the file is cut back to where it ended, and the caller gets
 * `AUDIT_UNAVAILABLE` and undoes what it did. This writer never rotates: the controller's next
 * group does, once the segment is past its bound.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AUDIT_ACTIVE_SEGMENT,
  AUDIT_GENESIS,
  FleetError,
  auditLineHash,
  type AuditHead,
  type AuditRecord,
  type Clock,
} from '@fleet/core/node';
import { fsyncDir } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { ensureDirUnder, recheckParents } from '../fs/safe-path.js';
import { statePaths } from '../state-paths.js';
import { SSH_CLIENT_PREFIX } from './adopt.js';
import { withAuditLock } from './append-lock.js';
import { inspectLog } from './segments.js';

export type ForeignAuditEntry = Omit<AuditRecord, 'seq' | 'ts' | 'prev'>;

function unavailable(why: string): FleetError {
  return new FleetError(
    'AUDIT_UNAVAILABLE',
    `the audit log is unavailable (${why}); nothing was done`,
  );
}

/** The lines of `entries` after `head`, and the head after the last. */
function chainLines(
  entries: readonly ForeignAuditEntry[],
  head: { seq: number; hash: string },
  at: string,
): { bytes: Buffer; head: AuditHead } {
  let { seq, hash } = head;
  const lines: string[] = [];
  for (const entry of entries) {
    const line = JSON.stringify({ seq: seq + 1, ts: at, prev: hash, ...entry });
    seq += 1;
    hash = auditLineHash(line);
    lines.push(`${line}\n`);
  }
  return { bytes: Buffer.from(lines.join(''), 'utf8'), head: { seq, sha256: hash } };
}

/**
 * Appends `entries` (each `client` `ssh:…`: the controller adopts nothing else) to the audit log of
 * `home` durably; returns the new head. `AUDIT_UNAVAILABLE` when they cannot be written.
 */
export async function appendAuditRecords(
  home: string,
  entries: readonly ForeignAuditEntry[],
  clock: Clock,
): Promise<AuditHead> {
  for (const entry of entries) {
    if (!entry.client?.startsWith(SSH_CLIENT_PREFIX)) {
      throw new Error(`appendAuditRecords: client ${String(entry.client)} is not ssh:…`);
    }
  }
  const dir = statePaths(home).root;
  const chain = await ensureDirUnder(home, dir);
  return withAuditLock(dir, async () => {
    const found = await inspectLog(dir, clock.now());
    if (found.broken !== undefined) throw unavailable(`writes are refused: ${found.broken}`);
    const at = clock.now().toISOString();
    const recovered: ForeignAuditEntry[] =
      found.tornMovedTo === undefined
        ? []
        : [
            {
              operationId: null,
              client: entries[0]?.client ?? SSH_CLIENT_PREFIX,
              operation: 'audit.recover',
              paths: [],
              files: [],
              outcome: 'recovered',
              code: null,
              detail: `a torn last line was moved aside to ${found.tornMovedTo}`,
            },
          ];
    const tail = found.head ?? { seq: 0, hash: AUDIT_GENESIS };
    const { bytes, head } = chainLines([...recovered, ...entries], tail, at);
    await recheckParents(home, chain);
    const path = join(dir, AUDIT_ACTIVE_SEGMENT);
    const handle = await open(
      path,
      constants.O_RDWR | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
    try {
      const start = found.activeBytes;
      if ((await handle.stat()).size !== start) throw unavailable(`${path} changed while read`);
      try {
        const { bytesWritten } = await handle.write(bytes, 0, bytes.length, start);
        if (bytesWritten !== bytes.length) {
          throw new Error(`short write: ${bytesWritten} of ${bytes.length} bytes`);
        }
        await handle.sync();
      } catch (error) {
        // Cut back to the last whole record; never up (a hole), so only when it grew.
        const size = (await handle.stat().catch(() => undefined))?.size;
        if (size !== undefined && size > start) await handle.truncate(start).catch(() => undefined);
        await handle.sync().catch(() => undefined);
        throw unavailable(errnoOf(error) ?? (error as Error).message);
      }
    } finally {
      await handle.close();
    }
    if (found.active === null) await fsyncDir(dir, 'state directory');
    return head;
  });
}
