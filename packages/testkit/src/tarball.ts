/**
 * A tiny ustar writer for tests: well-formed tarballs shaped like `npm pack` output (runtime
 * artifacts for generation tests), and the malformed or hostile ones (links, `..`, duplicates)
 * that `npm pack` would never produce but an attacker could.
 */
import { gzipSync } from 'node:zlib';

export interface FixtureEntry {
  readonly path: string;
  /** '0' file (default), '5' directory, '1' hard link, '2' symlink, 'x' pax header… */
  readonly type?: string;
  readonly data?: string | Buffer;
  readonly linkname?: string;
  readonly mode?: number;
}

function header(entry: FixtureEntry, size: number): Buffer {
  const block = Buffer.alloc(512);
  const put = (value: string, offset: number, length: number) =>
    block.write(value.slice(0, length), offset, length, 'utf8');
  const num = (value: number, offset: number, length: number) =>
    put(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length);
  put(entry.path, 0, 100);
  num(entry.mode ?? (entry.type === '5' ? 0o755 : 0o644), 100, 8);
  num(0, 108, 8);
  num(0, 116, 8);
  num(size, 124, 12);
  num(1_700_000_000, 136, 12);
  block.fill(0x20, 148, 156);
  put(entry.type ?? '0', 156, 1);
  if (entry.linkname) put(entry.linkname, 157, 100);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return block;
}

/** A gzip'd tarball of `entries`, in order. */
export function makeTgz(entries: readonly FixtureEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data ?? '');
    parts.push(header(entry, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

/** A pax extended header entry setting `path` for the next entry. */
export function paxPath(path: string): FixtureEntry {
  const body = (len: number) => `${len} path=${path}\n`;
  let length = body(0).length;
  while (body(length).length !== length) length = body(length).length;
  return { path: 'PaxHeader', type: 'x', data: body(length) };
}
