/**
 * `POST /v1/audit` (core `wire/audit-read.ts`): one page of the node's audit log, its lines
 * verbatim, so the operator recomputes the hash chain itself (`fleet audit verify --host`).
 *
 * Only `~/.local/state/fleet/audit.jsonl` is ever read — never the `audit.jsonl.torn-*` sidecar a
 * recovery moved aside, never another file: the path is fixed here, not taken from the request.
 * It is opened like any node file (core's path checks, every parent `lstat`ed, `O_NOFOLLOW`, the
 * fd's real path checked on Linux, the parents re-checked after the read) and streamed in chunks,
 * so a long log costs a bounded amount of memory per request. Lines are not redacted: the log
 * never holds a secret value, and a changed byte would break the chain the operator checks.
 */
import { lstatSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import {
  DEFAULT_AUDIT_READ_LINES,
  FleetError,
  type AuditReadRequest,
  type AuditReadResponse,
} from '@fleet/core';
import { errnoOf, fsFailure } from '../fs/errors.js';
import { OPEN_READ, checkFdPath, recheckParents, targetOf, walkParents } from '../fs/safe-path.js';
import type { ControllerRuntime } from '../runtime.js';
import { STATE_DIR } from '../state-paths.js';
import type { Handler } from './types.js';

/** The one file this route reads. */
export const AUDIT_LOG_PATH = `~/${STATE_DIR}/audit.jsonl`;
/** Bytes of line text one answer carries at most (JSON escaping at most doubles it). */
const PAGE_BYTES = 4 * 1024 * 1024;
/** A longer line is answered cut (and so fails the operator's check): no record is this long. */
const LINE_BYTES = 1024 * 1024;
const CHUNK = 64 * 1024;
/** An incomplete last line may be an append in flight: looked at again this often before it is `torn`. */
const TORN_RETRIES = 5;
const TORN_RETRY_MS = 20;

interface Page {
  readonly lines: string[];
  readonly more: boolean;
  readonly torn: boolean;
}

const UTF8 = new TextDecoder('utf-8');

async function readPage(handle: FileHandle, fromLine: number, limit: number): Promise<Page> {
  const lines: string[] = [];
  let bytes = 0;
  let line = 1; // the number of the line being read
  let tail = 0; // bytes of that line read so far
  let current: Buffer[] = [];
  let currentBytes = 0;
  let cut = false;
  const buffer = Buffer.allocUnsafe(CHUNK);
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? bytesRead : newline;
      tail += end - start;
      if (line >= fromLine && end > start) {
        const take = Math.min(end - start, LINE_BYTES - currentBytes);
        if (take < end - start) cut = true;
        if (take > 0) {
          current.push(Buffer.from(chunk.subarray(start, start + take)));
          currentBytes += take;
        }
      }
      if (newline === -1) break;
      if (line >= fromLine) {
        if (lines.length >= limit || (lines.length > 0 && bytes + currentBytes > PAGE_BYTES)) {
          return { lines, more: true, torn: false };
        }
        const text = UTF8.decode(Buffer.concat(current, currentBytes));
        lines.push(cut ? `${text}…` : text);
        bytes += currentBytes;
      }
      current = [];
      currentBytes = 0;
      cut = false;
      tail = 0;
      line += 1;
      start = end + 1;
    }
  }
  // Bytes after the last newline: an incomplete line, never answered as a line.
  return { lines, more: false, torn: tail > 0 };
}

async function readAuditPage(
  runtime: ControllerRuntime,
  fromLine: number,
  limit: number,
): Promise<Page> {
  const target = targetOf(runtime.home, AUDIT_LOG_PATH);
  if (target.absolute !== runtime.state.audit) {
    throw new FleetError('INTERNAL', 'the audit log is not where the controller writes it');
  }
  try {
    const chain = await walkParents(runtime.home, target, { create: false });
    if (!chain.complete) return { lines: [], more: false, torn: false };
    let stats;
    try {
      stats = lstatSync(target.absolute);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return { lines: [], more: false, torn: false };
      throw error;
    }
    if (stats.isSymbolicLink()) {
      throw new FleetError('SYMLINK_REFUSED', `${AUDIT_LOG_PATH} is a symbolic link; refused`);
    }
    if (!stats.isFile()) {
      throw new FleetError('NOT_REGULAR_FILE', `${AUDIT_LOG_PATH} is not a regular file`);
    }
    const handle = await open(target.absolute, OPEN_READ);
    try {
      if (!(await handle.stat()).isFile()) {
        throw new FleetError('NOT_REGULAR_FILE', `${AUDIT_LOG_PATH} is not a regular file`);
      }
      await checkFdPath(runtime.home, handle, target.absolute);
      const page = await readPage(handle, fromLine, limit);
      await recheckParents(runtime.home, chain);
      return page;
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw fsFailure(error, AUDIT_LOG_PATH);
  }
}

export const audit: Handler = async ({ runtime, body }) => {
  const request = body as AuditReadRequest;
  const fromSeq = request.fromSeq ?? 1;
  const limit = request.limit ?? DEFAULT_AUDIT_READ_LINES;
  // The head first: every line up to it is in the file by the time the file is read.
  const last = runtime.audit.head();
  let page = await readAuditPage(runtime, fromSeq, limit);
  // A line without its newline is usually an append in flight (appends are serialised, written
  // and fsync'd while reads go on); only one that stays is reported torn.
  for (let retry = 0; page.torn && retry < TORN_RETRIES; retry += 1) {
    await new Promise((resolve) => setTimeout(resolve, TORN_RETRY_MS));
    page = await readAuditPage(runtime, fromSeq, limit);
  }
  const response: AuditReadResponse = {
    nodeId: runtime.nodeId,
    fromSeq,
    lines: page.lines,
    head: last.seq === 0 ? null : { seq: last.seq, sha256: last.sha256 },
    more: page.more,
    torn: page.torn,
  };
  return { status: 200, body: response };
};
