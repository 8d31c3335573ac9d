/**
 * The model of the power-loss simulator (catalogue 24; support/crash-fs.ts records the trace): a
 * home as inodes and directory entries, the operations a trace holds, when each becomes durable,
 * and the states a crash after any of them can leave. Pure functions over data, but for
 * `scanTree` and `materialize`, which read and write a real tree.
 *
 * Durability is POSIX's and no more: a file's writes, truncations and mode changes are durable
 * once that file is fsync'd (or fdatasync'd) after them; a create, link, unlink or rename once its
 * directory is fsync'd after it (a rename: both directories). A state is the durable part plus a
 * subset of the rest, applied in order, each unsynced write possibly torn at 512-byte sectors.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readdirSync, type Stats } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SECTOR = 512;

export type NodeId = number;
interface FileNode {
  readonly kind: 'file';
  data: Buffer;
  mode: number;
}
interface DirNode {
  readonly kind: 'dir';
  readonly entries: Map<string, NodeId>;
  mode: number;
}
type FsNode = FileNode | DirNode;

/** A filesystem image: every inode by id; the home is {@link ROOT}. */
export type Image = Map<NodeId, FsNode>;
export const ROOT: NodeId = 0;

export type OpBody =
  | {
      readonly kind: 'create';
      readonly dir: NodeId;
      readonly name: string;
      readonly node: NodeId;
      readonly type: 'file' | 'dir';
      readonly mode: number;
    }
  | { readonly kind: 'link'; readonly dir: NodeId; readonly name: string; readonly node: NodeId }
  | { readonly kind: 'unlink'; readonly dir: NodeId; readonly name: string }
  | {
      readonly kind: 'rename';
      readonly fromDir: NodeId;
      readonly fromName: string;
      readonly toDir: NodeId;
      readonly toName: string;
      readonly node: NodeId;
    }
  | {
      readonly kind: 'write';
      readonly node: NodeId;
      readonly offset: number;
      readonly data: Buffer;
    }
  | { readonly kind: 'truncate'; readonly node: NodeId; readonly size: number }
  | { readonly kind: 'chmod'; readonly node: NodeId; readonly mode: number }
  | { readonly kind: 'fsync'; readonly node: NodeId; readonly dropped: boolean }
  | { readonly kind: 'mark'; readonly label: string };

/** One recorded operation, with the `~/` path it was made on (for messages and mutations). */
export type RecordedOp = OpBody & { readonly path: string; readonly what: string };

/** A state a power loss could leave: crash after `crashAfter` operations, some unsynced kept. */
export interface CrashState {
  readonly crashAfter: number;
  readonly image: Image;
  /** sha256 of the reachable tree (names, types, modes, contents): equal states, equal digest. */
  readonly digest: string;
  /** Which unsynced operations this state kept, and how. */
  describe(): string;
}

export interface CrashStateOptions {
  /** All subsets while there are at most this many (default 256); else a sample. */
  readonly exhaustiveLimit?: number;
  /** Size of the random sample per crash point (default 32), besides "none kept" and "all kept". */
  readonly samples?: number;
  readonly seed?: number;
}

/** A small seeded PRNG (mulberry32): the same seed, the same sample. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function cloneImage(image: Image): Image {
  const out: Image = new Map();
  for (const [id, node] of image) {
    out.set(
      id,
      node.kind === 'file'
        ? { kind: 'file', data: node.data, mode: node.mode }
        : { kind: 'dir', entries: new Map(node.entries), mode: node.mode },
    );
  }
  return out;
}

function nodeOf(image: Image, id: NodeId, kind: 'file'): FileNode;
function nodeOf(image: Image, id: NodeId, kind: 'dir'): DirNode;
function nodeOf(image: Image, id: NodeId, kind: 'file' | 'dir'): FsNode {
  let node = image.get(id);
  if (node === undefined) {
    // An inode whose creation did not survive: it exists, unnamed, and may get a name later.
    node =
      kind === 'file'
        ? { kind: 'file', data: Buffer.alloc(0), mode: 0o600 }
        : { kind: 'dir', entries: new Map(), mode: 0o700 };
    image.set(id, node);
  }
  if (node.kind !== kind) throw new Error(`crash-fs: inode ${id} is a ${node.kind}, not a ${kind}`);
  return node;
}

/** Writes `data` at `offset`, only the sectors in `sectors` (all when undefined). */
function applyWrite(file: FileNode, offset: number, data: Buffer, sectors?: readonly boolean[]) {
  const end = offset + data.length;
  let target = file.data;
  const first = Math.floor(offset / SECTOR);
  for (let s = first; s * SECTOR < end; s += 1) {
    if (sectors !== undefined && !sectors[s - first]) continue;
    const from = Math.max(offset, s * SECTOR);
    const to = Math.min(end, (s + 1) * SECTOR);
    if (target.length < to) target = Buffer.concat([target, Buffer.alloc(to - target.length)]);
    else if (target === file.data) target = Buffer.from(target);
    data.copy(target, from, from - offset, to - offset);
  }
  file.data = target;
}

function sectorsOf(op: { offset: number; data: Buffer }): number {
  if (op.data.length === 0) return 0;
  return Math.floor((op.offset + op.data.length - 1) / SECTOR) - Math.floor(op.offset / SECTOR) + 1;
}

/** A pending operation's fate in one crash state: dropped, kept, or (a write) kept sector by sector. */
export type Fate = boolean | readonly boolean[];

function applyOp(image: Image, op: RecordedOp, fate: Fate = true): void {
  if (fate === false) return;
  switch (op.kind) {
    case 'create': {
      if (!image.has(op.node)) {
        const made =
          op.type === 'file' ? nodeOf(image, op.node, 'file') : nodeOf(image, op.node, 'dir');
        made.mode = op.mode;
      }
      nodeOf(image, op.dir, 'dir').entries.set(op.name, op.node);
      return;
    }
    case 'link':
      nodeOf(image, op.node, 'file');
      nodeOf(image, op.dir, 'dir').entries.set(op.name, op.node);
      return;
    case 'unlink':
      nodeOf(image, op.dir, 'dir').entries.delete(op.name);
      return;
    case 'rename': {
      const from = nodeOf(image, op.fromDir, 'dir');
      const to = nodeOf(image, op.toDir, 'dir');
      if (from === to && op.fromName === op.toName) return;
      to.entries.set(op.toName, op.node);
      if (from.entries.get(op.fromName) === op.node) from.entries.delete(op.fromName);
      return;
    }
    case 'write':
      applyWrite(
        nodeOf(image, op.node, 'file'),
        op.offset,
        op.data,
        fate === true ? undefined : fate,
      );
      return;
    case 'truncate': {
      const file = nodeOf(image, op.node, 'file');
      file.data =
        file.data.length >= op.size
          ? file.data.subarray(0, op.size)
          : Buffer.concat([file.data, Buffer.alloc(op.size - file.data.length)]);
      return;
    }
    case 'chmod': {
      const node = image.get(op.node);
      if (node) node.mode = op.mode;
      return;
    }
    case 'fsync':
    case 'mark':
      return;
  }
}

/** Walks the reachable tree: `visit(relativePath, node)` parents first, names sorted. */
function walkImage(image: Image, visit: (path: string, node: FsNode) => void): void {
  const seen = new Set<NodeId>();
  const walk = (id: NodeId, path: string) => {
    const node = image.get(id);
    if (node === undefined) return;
    visit(path, node);
    if (node.kind !== 'dir' || seen.has(id)) return;
    seen.add(id);
    for (const name of [...node.entries.keys()].sort()) {
      walk(node.entries.get(name) as NodeId, path === '' ? name : `${path}/${name}`);
    }
  };
  walk(ROOT, '');
}

/** One line per reachable path: what two images are compared by. */
export function listing(image: Image): string[] {
  const lines: string[] = [];
  walkImage(image, (path, node) => {
    const mode = (node.mode & 0o7777).toString(8);
    lines.push(
      node.kind === 'dir'
        ? `${path}/ dir ${mode}`
        : `${path} file ${mode} ${createHash('sha256').update(node.data).digest('hex')}`,
    );
  });
  return lines;
}

export function digestOf(image: Image): string {
  return createHash('sha256').update(listing(image).join('\n')).digest('hex');
}

/** Writes the reachable tree of `image` under the empty directory `dir`. */
export async function materialize(image: Image, dir: string): Promise<void> {
  const dirs: [string, number][] = [];
  const files: [string, FileNode][] = [];
  walkImage(image, (path, node) => {
    if (node.kind === 'dir') dirs.push([path, node.mode]);
    else files.push([path, node]);
  });
  for (const [path] of dirs) if (path !== '') await mkdir(join(dir, path), { mode: 0o700 });
  for (const [path, file] of files) {
    await writeFile(join(dir, path), file.data, { mode: 0o600 });
    await chmod(join(dir, path), file.mode & 0o7777);
  }
  for (const [path, mode] of dirs.reverse()) await chmod(join(dir, path), mode & 0o7777);
}

/** Reads a real tree into an image (regular files and directories only). */
export const keyOf = (stats: Stats) => `${stats.dev}:${stats.ino}`;

export function scanTree(home: string, ids: Map<string, NodeId>, nextId: () => NodeId): Image {
  const image: Image = new Map();
  const scan = (path: string, id: NodeId) => {
    const stats = lstatSync(path);
    ids.set(keyOf(stats), id);
    if (stats.isDirectory()) {
      const entries = new Map<string, NodeId>();
      image.set(id, { kind: 'dir', entries, mode: stats.mode & 0o7777 });
      for (const name of readdirSync(path).sort()) {
        const child = nextId();
        entries.set(name, child);
        scan(join(path, name), child);
      }
    } else if (stats.isFile()) {
      image.set(id, { kind: 'file', data: readFileSync(path), mode: stats.mode & 0o7777 });
    } else {
      throw new Error(`crash-fs: ${path} is neither a file nor a directory; not modelled`);
    }
  };
  scan(home, ROOT);
  return image;
}

/** The trace's first `count` operations applied to `initial`, each with its fate. */
export function applyTrace(
  initial: Image,
  trace: readonly RecordedOp[],
  count: number,
  fate: (index: number) => Fate = () => true,
): Image {
  const image = cloneImage(initial);
  for (let i = 0; i < count; i += 1) applyOp(image, trace[i] as RecordedOp, fate(i));
  return image;
}

/** For each operation, the index of the fsync that makes it durable (`Infinity`: none). */
export function durableAt(trace: readonly RecordedOp[]): number[] {
  const nextSync = (node: NodeId, after: number) => {
    for (let j = after + 1; j < trace.length; j += 1) {
      const op = trace[j] as RecordedOp;
      if (op.kind === 'fsync' && op.node === node && !op.dropped) return j;
    }
    return Infinity;
  };
  return trace.map((op, i) => {
    switch (op.kind) {
      case 'create':
      case 'link':
      case 'unlink':
        return nextSync(op.dir, i);
      case 'rename':
        return Math.max(nextSync(op.fromDir, i), nextSync(op.toDir, i));
      case 'write':
      case 'truncate':
      case 'chmod':
        return nextSync(op.node, i);
      default:
        return i;
    }
  });
}

/** The fates of `pending` one bit vector stands for (a write takes one bit per sector). */
function fatesOf(
  trace: readonly RecordedOp[],
  pending: readonly number[],
  widths: readonly number[],
  bits: readonly boolean[],
): Map<number, Fate> {
  const fates = new Map<number, Fate>();
  let at = 0;
  pending.forEach((index, k) => {
    const width = widths[k] as number;
    const mine = bits.slice(at, at + width);
    at += width;
    fates.set(
      index,
      (trace[index] as RecordedOp).kind === 'write' && width > 0 ? mine : mine[0] === true,
    );
  });
  return fates;
}

/** Every bit vector of `count` bits while there are at most `limit`, else a seeded sample. */
function bitVectors(
  count: number,
  limit: number,
  samples: number,
  random: () => number,
): boolean[][] {
  const vectors: boolean[][] = [];
  if (2 ** count <= limit) {
    for (let n = 0; n < 2 ** count; n += 1) {
      vectors.push(Array.from({ length: count }, (_, bit) => Math.floor(n / 2 ** bit) % 2 === 1));
    }
    return vectors;
  }
  vectors.push(Array.from({ length: count }, () => false));
  vectors.push(Array.from({ length: count }, () => true));
  for (let n = 0; n < samples; n += 1)
    vectors.push(Array.from({ length: count }, () => random() < 0.5));
  return vectors;
}

/** Every state a power loss after each operation of `trace` could leave (see the module comment). */
export function* crashStates(
  initial: Image,
  trace: readonly RecordedOp[],
  options: CrashStateOptions = {},
): Generator<CrashState> {
  const durable = durableAt(trace);
  for (let crashAfter = 0; crashAfter <= trace.length; crashAfter += 1) {
    const pending: number[] = [];
    for (let i = 0; i < crashAfter; i += 1) {
      const op = trace[i] as RecordedOp;
      if (op.kind !== 'fsync' && op.kind !== 'mark' && (durable[i] as number) >= crashAfter) {
        pending.push(i);
      }
    }
    const widths = pending.map((i) => {
      const op = trace[i] as RecordedOp;
      return op.kind === 'write' ? sectorsOf(op) : 1;
    });
    const random = prng((options.seed ?? 24) * 100_003 + crashAfter);
    const count = widths.reduce((sum, bits) => sum + bits, 0);
    for (const bits of bitVectors(
      count,
      options.exhaustiveLimit ?? 256,
      options.samples ?? 32,
      random,
    )) {
      const fates = fatesOf(trace, pending, widths, bits);
      const image = applyTrace(initial, trace, crashAfter, (index) => fates.get(index) ?? true);
      yield {
        crashAfter,
        image,
        digest: digestOf(image),
        describe: () => describeState(trace, crashAfter, pending, fates),
      };
    }
  }
}

function describeState(
  trace: readonly RecordedOp[],
  crashAfter: number,
  pending: readonly number[],
  fates: Map<number, Fate>,
): string {
  const line = (index: number) =>
    `${(trace[index] as RecordedOp).what} ${(trace[index] as RecordedOp).path}`;
  const last =
    crashAfter === 0 ? 'before the first call' : `after #${crashAfter - 1} ${line(crashAfter - 1)}`;
  const kept = pending.map((index) => {
    const fate = fates.get(index);
    const how =
      fate === true
        ? 'kept'
        : fate === false
          ? 'lost'
          : `sectors ${(fate as boolean[]).map((s) => (s ? 'N' : 'o')).join('')}`;
    return `#${index} ${line(index)}: ${how}`;
  });
  return `power lost ${last}; unsynced: ${kept.length === 0 ? 'none' : kept.join('; ')}`;
}
