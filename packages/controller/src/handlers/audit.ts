/**
 * `POST /v1/audit` (core `wire/audit-read.ts`): one page of the node's audit log, its lines
 * verbatim, so the operator recomputes the hash chain itself (`fleet audit verify --host`).
 *
 * Only the log's segments are ever read — `~/.local/state/fleet/audit.jsonl` and the closed
 * `audit.<seq>.jsonl` it rotated into, as one sequence of lines, oldest first — never the
 * `audit.jsonl.torn-*` sidecar a recovery moved aside, never another file: the names are fixed
 * here, not taken from the request.
 * It is opened like any node file (core's path checks, every parent `lstat`ed, `O_NOFOLLOW`, the
 * fd's real path checked on Linux, the parents re-checked after the read) and streamed in chunks,
 * so a long log costs a bounded amount of memory per request. Lines are not redacted: the log
 * never holds a secret value, and a changed byte would break the chain the operator checks.
 */
import { lstatSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DEFAULT_AUDIT_READ_LINES,
  FleetError,
  type AuditReadRequest,
  type AuditReadResponse,
} from '@fleet/core/node';
import { errnoOf, fsFailure } from '../fs/errors.js';
import { OPEN_READ, checkFdPath, recheckParents, targetOf, walkParents } from '../fs/safe-path.js';
import type { ControllerRuntime } from '../runtime.js';
import { STATE_DIR } from '../state-paths.js';
import type { Handler } from './types.js';

/** The active segment; closed ones are `audit.<first seq>.jsonl` beside it. */
export const AUDIT_LOG_PATH = `~/${STATE_DIR}/audit.jsonl`;
/** The only names this route reads: the segments (never a torn sidecar, a sealed log, anything else). */
const AUDIT_FILES = /^audit(\.\d{12})?\.jsonl$/;
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

/** Reading lines across segment files: the numbering goes on from one file to the next. */
class Pager {
  readonly lines: string[] = [];
  private bytes = 0;
  /** The number of the line being read, counted over every segment. */
  line = 1;
  full = false;

  constructor(
    private readonly fromLine: number,
    private readonly limit: number,
  ) {}

  /** Reads one file; returns the bytes of an incomplete last line (`0`: it ends cleanly). */
  async read(handle: FileHandle, last: boolean): Promise<number> {
    let tail = 0; // bytes of the current line read so far
    let current: Buffer[] = [];
    let currentBytes = 0;
    let cut = false;
    const buffer = Buffer.allocUnsafe(CHUNK);
    const take = (): boolean => {
      if (this.line >= this.fromLine) {
        if (
          this.lines.length >= this.limit ||
          (this.lines.length > 0 && this.bytes + currentBytes > PAGE_BYTES)
        ) {
          this.full = true;
          return false;
        }
        const text = UTF8.decode(Buffer.concat(current, currentBytes));
        this.lines.push(cut ? `${text}…` : text);
        this.bytes += currentBytes;
      }
      current = [];
      currentBytes = 0;
      cut = false;
      tail = 0;
      this.line += 1;
      return true;
    };
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? bytesRead : newline;
        tail += end - start;
        if (this.line >= this.fromLine && end > start) {
          const room = Math.min(end - start, LINE_BYTES - currentBytes);
          if (room < end - start) cut = true;
          if (room > 0) {
            current.push(Buffer.from(chunk.subarray(start, start + room)));
            currentBytes += room;
          }
        }
        if (newline === -1) break;
        if (!take()) return 0;
        start = end + 1;
      }
    }
    // Bytes after the last newline: in the active segment an incomplete line (never answered as
    // a line); in a closed one — which never ends so — a line of its own, for the verifier to see.
    if (tail > 0 && !last) {
      take();
      return 0;
    }
    return tail;
  }
}

async function openSegment(runtime: ControllerRuntime, name: string) {
  const path = `~/${STATE_DIR}/${name}`;
  const target = targetOf(runtime.home, path);
  if (target.absolute !== join(runtime.state.root, name)) {
    throw new FleetError('INTERNAL', 'the audit log is not where the controller writes it');
  }
  const chain = await walkParents(runtime.home, target, { create: false });
  if (!chain.complete) return undefined;
  let stats;
  try {
    stats = lstatSync(target.absolute);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
  if (stats.isSymbolicLink()) {
    throw new FleetError('SYMLINK_REFUSED', `${path} is a symbolic link; refused`);
  }
  if (!stats.isFile()) throw new FleetError('NOT_REGULAR_FILE', `${path} is not a regular file`);
  const handle = await open(target.absolute, OPEN_READ);
  try {
    if (!(await handle.stat()).isFile()) {
      throw new FleetError('NOT_REGULAR_FILE', `${path} is not a regular file`);
    }
    await checkFdPath(runtime.home, handle, target.absolute);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return { handle, chain };
}

async function readAuditPage(
  runtime: ControllerRuntime,
  fromLine: number,
  limit: number,
): Promise<Page> {
  const names = await runtime.audit.segmentNames();
  const pager = new Pager(fromLine, limit);
  let torn = false;
  for (const [index, name] of names.entries()) {
    if (!AUDIT_FILES.test(name)) continue;
    try {
      const opened = await openSegment(runtime, name);
      if (opened === undefined) continue;
      try {
        torn = (await pager.read(opened.handle, index === names.length - 1)) > 0;
        await recheckParents(runtime.home, opened.chain);
      } finally {
        await opened.handle.close();
      }
    } catch (error) {
      throw fsFailure(error, `~/${STATE_DIR}/${name}`);
    }
    if (pager.full) return { lines: pager.lines, more: true, torn: false };
  }
  return { lines: pager.lines, more: false, torn };
}

export const audit: Handler = async ({ runtime, body }) => {
  const request = body as AuditReadRequest;
  const fromSeq = request.fromSeq ?? 1;
  const limit = request.limit ?? DEFAULT_AUDIT_READ_LINES;
  // The head first: every line up to it is in the files by the time they are read.
  const last = runtime.audit.head();
  let rotations = runtime.audit.rotations;
  let page = await readAuditPage(runtime, fromSeq, limit);
  // A line without its newline is usually an append in flight (appends are serialised, written
  // and fsync'd while reads go on); only one that stays is reported torn. A rotation during the
  // read moved records between files: read again.
  for (
    let retry = 0;
    (page.torn || rotations !== runtime.audit.rotations) && retry < TORN_RETRIES;
    retry += 1
  ) {
    if (page.torn) await new Promise((resolve) => setTimeout(resolve, TORN_RETRY_MS));
    rotations = runtime.audit.rotations;
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
