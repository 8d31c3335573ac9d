/**
 * A strict reader of the `.tgz` tarballs `npm pack` writes (ustar, with pax and GNU long-name
 * headers). It never touches the filesystem: it returns the entries, and refuses — with
 * `GENERATION_INVALID` — anything a runtime generation has no business containing: links,
 * devices, FIFOs, absolute paths, `..`, duplicated paths, names fleet reserves, a bad header
 * checksum, or a size over the bounds.
 */
import { gunzipSync } from 'node:zlib';
import { FleetError, GENERATION_ARTIFACT, GENERATION_MANIFEST } from '@fleet/core/node';

export interface TarEntry {
  /** `/`-separated, relative, normalised. */
  readonly path: string;
  readonly type: 'file' | 'directory';
  readonly data: Buffer;
}

export interface TarLimits {
  /** Bytes once unpacked (default 512 MiB). */
  readonly maxBytes: number;
  readonly maxEntries: number;
}

/**
 * Bounds for a real runtime: the @fleet/cli artifact bundles its whole production dependency
 * closure (scripts/bundle-runtime-deps.mjs, which leaves out what no node loads) — about 5,600
 * entries and 28 MB unpacked today. These leave over 10x room for growth
 * while still refusing a tarball that would exhaust a node's memory (it is unpacked in memory) or
 * disk.
 */
export const DEFAULT_TAR_LIMITS: TarLimits = { maxBytes: 512 * 1024 * 1024, maxEntries: 100_000 };

const BLOCK = 512;
const RESERVED_TOP = new Set([GENERATION_MANIFEST, GENERATION_ARTIFACT]);

function invalid(message: string): FleetError {
  return new FleetError('GENERATION_INVALID', `artifact tarball: ${message}`);
}

function text(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
}

function octal(block: Buffer, start: number, length: number, what: string): number {
  const field = block.subarray(start, start + length);
  if ((field[0] ?? 0) & 0x80) {
    // base-256 (GNU): big-endian, positive only
    let value = 0;
    for (let i = 1; i < field.length; i += 1) value = value * 256 + (field[i] ?? 0);
    if (!Number.isSafeInteger(value)) throw invalid(`${what} out of range`);
    return value;
  }
  const digits = text(block, start, length).trim();
  if (digits === '') return 0;
  if (!/^[0-7]+$/.test(digits)) throw invalid(`${what} is not octal`);
  return Number.parseInt(digits, 8);
}

function checksumOk(block: Buffer): boolean {
  const expected = octal(block, 148, 8, 'header checksum');
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  return sum === expected;
}

/** The `key=value` records of a pax extended header. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space === -1) throw invalid('malformed pax header');
    const length = Number(data.subarray(offset, space).toString('ascii'));
    if (!Number.isInteger(length) || length <= 0 || offset + length > data.length) {
      throw invalid('malformed pax header');
    }
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals === -1) throw invalid('malformed pax record');
    records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}

/** Normalises an entry name; refuses anything that could land outside the generation. */
export function entryPath(raw: string): string {
  if (raw.includes('\0')) throw invalid(`entry name with NUL`);
  if (raw.includes('\\')) throw invalid(`entry ${JSON.stringify(raw)} contains a backslash`);
  if (raw.startsWith('/')) throw invalid(`entry ${JSON.stringify(raw)} is absolute`);
  let name = raw;
  while (name.startsWith('./')) name = name.slice(2);
  name = name.replace(/\/+$/, '');
  const parts = name.split('/');
  for (const part of parts) {
    if (part === '' || part === '.' || part === '..') {
      throw invalid(`entry ${JSON.stringify(raw)} has an empty, "." or ".." component`);
    }
    if (/^[A-Za-z]:$/.test(part)) throw invalid(`entry ${JSON.stringify(raw)} names a drive`);
  }
  if (parts.length === 1 && RESERVED_TOP.has(parts[0] as string)) {
    throw invalid(`entry ${JSON.stringify(raw)} uses a name fleet reserves in a generation`);
  }
  return parts.join('/');
}

/** Reads every entry of a gzip'd tarball held in memory. */
export function readTgz(gz: Buffer, limits: TarLimits = DEFAULT_TAR_LIMITS): TarEntry[] {
  const entries = readEntries(gunzipBounded(gz, limits), limits);
  if (entries.length === 0) throw invalid('no entries');
  requireNoFileAsParent(entries);
  return entries;
}

function gunzipBounded(gz: Buffer, limits: TarLimits): Buffer {
  try {
    // Besides the file data, every entry costs a header block, up to a block of padding and
    // perhaps a pax or long-name header: allow for that, so that only the limits below decide.
    return gunzipSync(gz, {
      maxOutputLength: limits.maxBytes + (limits.maxEntries + 2) * 4 * BLOCK,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw invalid(`unpacks to more than ${limits.maxBytes} bytes`);
    }
    throw invalid(`not a gzip'd tarball (${(error as Error).message})`);
  }
}

/** One header block and the data that follows it. */
interface TarRecord {
  readonly header: Buffer;
  /** The header's type flag (`'0'` a file, `'5'` a directory, `'x'` a pax header, …). */
  readonly type: string;
  readonly data: Buffer;
  /** Where the next header starts: after the data and its padding. */
  readonly end: number;
}

/**
 * The record whose header starts at `offset` (its size from the pending pax header, if any);
 * `null` at the end-of-archive block.
 */
function recordAt(tar: Buffer, offset: number, pax: Map<string, string> | null): TarRecord | null {
  const header = tar.subarray(offset, offset + BLOCK);
  if (header.every((byte) => byte === 0)) return null;
  if (!checksumOk(header)) throw invalid(`bad header checksum at byte ${offset}`);
  const type = String.fromCharCode(header[156] ?? 0);
  const size = pax?.has('size') ? Number(pax.get('size')) : octal(header, 124, 12, 'size');
  if (!Number.isSafeInteger(size) || size < 0) throw invalid('bad entry size');
  const data = tar.subarray(offset + BLOCK, offset + BLOCK + size);
  if (data.length !== size) throw invalid('truncated entry');
  return { header, type, data, end: offset + BLOCK + Math.ceil(size / BLOCK) * BLOCK };
}

function ustarName(header: Buffer): string {
  const prefix = text(header, 345, 155);
  return prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100);
}

/** Only files and directories (`'7'`, contiguous, is a file) go into a generation. */
function requireFileOrDirectory(type: string, raw: string): void {
  if (type === '0' || type === '\0' || type === '5' || type === '7') return;
  const kinds: Record<string, string> = {
    '1': 'a hard link',
    '2': 'a symbolic link',
    '3': 'a character device',
    '4': 'a block device',
    '6': 'a FIFO',
    K: 'a long link name',
  };
  throw invalid(
    `entry ${JSON.stringify(raw)} is ${kinds[type] ?? `of type ${JSON.stringify(type)}`}; refused`,
  );
}

/**
 * The entries, in order: a pax or GNU long-name header names the entry after it; every path is
 * normalised, once, within the size and entry bounds.
 */
function readEntries(tar: Buffer, limits: TarLimits): TarEntry[] {
  const entries: TarEntry[] = [];
  const seen = new Set<string>();
  let unpacked = 0;
  let longName: string | null = null;
  let pax: Map<string, string> | null = null;
  let offset = 0;
  let ended = false;
  while (offset + BLOCK <= tar.length) {
    const record = recordAt(tar, offset, pax);
    if (record === null) {
      ended = true;
      break;
    }
    offset = record.end;
    const { type, data } = record;
    if (type === 'x') {
      pax = paxRecords(data);
      continue;
    }
    if (type === 'g') continue; // global pax header: nothing fleet relies on
    if (type === 'L') {
      longName = text(data, 0, data.length);
      continue;
    }
    const raw = pax?.get('path') ?? longName ?? ustarName(record.header);
    pax = null;
    longName = null;
    requireFileOrDirectory(type, raw);
    const path = entryPath(raw);
    if (seen.has(path)) throw invalid(`entry ${JSON.stringify(path)} appears twice`);
    seen.add(path);
    unpacked += data.length;
    if (unpacked > limits.maxBytes) throw invalid(`unpacks to more than ${limits.maxBytes} bytes`);
    if (entries.length >= limits.maxEntries)
      throw invalid(`more than ${limits.maxEntries} entries`);
    entries.push({ path, type: type === '5' ? 'directory' : 'file', data });
  }
  if (!ended && offset < tar.length) throw invalid('trailing bytes after the last entry');
  return entries;
}

/** A path used both as a file and as a parent directory cannot be unpacked faithfully. */
function requireNoFileAsParent(entries: readonly TarEntry[]): void {
  const files = new Set(entries.filter((e) => e.type === 'file').map((e) => e.path));
  for (const entry of entries) {
    const parts = entry.path.split('/');
    for (let i = 1; i < parts.length; i += 1) {
      if (files.has(parts.slice(0, i).join('/'))) {
        throw invalid(`entry ${JSON.stringify(entry.path)} is inside a file`);
      }
    }
  }
}
