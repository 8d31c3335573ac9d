/**
 * Replaces the contents of a few named files inside an `npm pack` tarball and leaves every other
 * byte of the archive as it was (headers, modes, times, order): how `fleet lab build --version` and
 * `fleet release --version` turn one packed runtime into a build of another version without
 * unpacking it to disk (docs/runtime-lifecycle.md, docs/releases.md). Pure: a gzip'd tarball in, a
 * gzip'd tarball out — the same bytes for the same input, so a release made so is rebuilt exactly.
 *
 * Only plain ustar entries are edited: an entry to replace that a pax or GNU long-name header
 * describes (whose size or name the extension may override) is refused, as is a name that is not
 * found exactly once. `npm pack` writes `package/package.json` and the other short top-level names
 * as plain ustar entries.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { FleetError } from '../errors.js';

const BLOCK = 512;
/** Header types that describe the entry after them (pax, GNU long name / long link). */
const EXTENSIONS = new Set(['x', 'g', 'L', 'K']);

function field(header: Buffer, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? length : end).toString('utf8');
}

function entryName(header: Buffer): string {
  const name = field(header, 0, 100);
  const prefix = field(header, 345, 155);
  return prefix === '' ? name : `${prefix}/${name}`;
}

function octal(header: Buffer, start: number, length: number): number {
  const digits = field(header, start, length).trim();
  if (!/^[0-7]+$/.test(digits)) throw invalid(`a header field at byte ${start} is not octal`);
  return Number.parseInt(digits, 8);
}

function invalid(why: string): FleetError {
  return new FleetError('GENERATION_INVALID', `cannot edit the packed tarball: ${why}`);
}

/** The header with a new size and its checksum computed again. */
function resized(header: Buffer, size: number): Buffer {
  const copy = Buffer.from(header);
  copy.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 12, 'ascii');
  copy.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of copy) sum += byte;
  copy.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return copy;
}

/**
 * `tgz` with each file named in `edits` (its full path in the tarball, e.g.
 * `package/package.json`) replaced by what its function returns for the old contents.
 */
export function editTarballFiles(
  tgz: Buffer,
  edits: ReadonlyMap<string, (old: Buffer) => Buffer>,
): Buffer {
  const tar = gunzipSync(tgz);
  const parts: Buffer[] = [];
  const done = new Set<string>();
  let extended = false;
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const type = String.fromCharCode(header[156] ?? 0);
    const size = octal(header, 124, 12);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    const data = tar.subarray(offset + BLOCK, offset + BLOCK + size);
    const name = entryName(header);
    const edit = type === '0' || type === '\0' ? edits.get(name) : undefined;
    if (edit !== undefined) {
      if (extended) throw invalid(`${name} is described by an extended header`);
      if (done.has(name)) throw invalid(`${name} is in the tarball twice`);
      const replaced = edit(Buffer.from(data));
      parts.push(resized(header, replaced.length), replaced);
      parts.push(Buffer.alloc((BLOCK - (replaced.length % BLOCK)) % BLOCK));
      done.add(name);
    } else {
      parts.push(tar.subarray(offset, offset + BLOCK + padded));
    }
    extended = EXTENSIONS.has(type);
    offset += BLOCK + padded;
  }
  const missing = [...edits.keys()].filter((name) => !done.has(name));
  if (missing.length > 0) throw invalid(`it holds no ${missing.join(', ')}`);
  parts.push(Buffer.alloc(2 * BLOCK));
  return gzipSync(Buffer.concat(parts));
}

/** A JSON file's text with top-level `changes` merged in, in its own indentation and final newline. */
export function editJsonText(text: string, changes: Readonly<Record<string, unknown>>): string {
  const value = JSON.parse(text) as Record<string, unknown>;
  const indent = /^\{\n([ \t]+)"/.exec(text)?.[1] ?? '';
  const edited = JSON.stringify({ ...value, ...changes }, null, indent === '' ? undefined : indent);
  return text.endsWith('\n') ? `${edited}\n` : edited;
}

/**
 * The packed runtime `tgz` with its package's version set from `from` to `to`: `package.json`, the
 * oclif manifest (oclif ignores a manifest of another version than its package) and the build
 * record, which says who set it (`versionSet: { by, from, to }`, contract §1.8).
 */
export function withPackageVersion(tgz: Buffer, from: string, to: string, by: string): Buffer {
  const json = (changes: Record<string, unknown>) => (old: Buffer) =>
    Buffer.from(editJsonText(old.toString('utf8'), changes));
  return editTarballFiles(
    tgz,
    new Map([
      ['package/package.json', json({ version: to })],
      ['package/oclif.manifest.json', json({ version: to })],
      ['package/fleet-build.json', json({ versionSet: { by, from, to } })],
    ]),
  );
}
