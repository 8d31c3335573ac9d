/**
 * The recorder of the power-loss simulator (catalogue 24; docs/durability.md), modelled on SQLite's
 * `test6.c`. `kill -9` cannot stand in for a power loss — the page cache survives it — so the test
 * records instead: `CrashRecorder` is a `DurableFs` (src/fs/seam.ts) whose every call does the real
 * thing on the real disk (the running controller sees what a page cache would show it) and is
 * appended to a trace of operations on the model of support/crash-image.ts, which tells what a
 * crash after each of them could leave.
 *
 * It is at least as strict as a real filesystem: nothing unsynced is assumed to have reached the
 * disk, and a file's data does not follow its name (or the reverse). A handle method the model
 * does not know is an error, not a pass-through, and `verifyAgainstDisk()` checks that the trace,
 * fully applied, rebuilds exactly the tree on disk — so no write went around the seam unseen.
 */
import { closeSync, constants, fsyncSync, lstatSync, openSync, type Stats } from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';
import { nodeDurableFs, type DurableFs, type DurableHandle } from '../../src/fs/seam.js';
import {
  applyTrace,
  crashStates,
  keyOf,
  listing,
  scanTree,
  type CrashState,
  type CrashStateOptions,
  type Image,
  type NodeId,
  type OpBody,
  type RecordedOp,
} from './crash-image.js';

export { materialize, type CrashState, type RecordedOp } from './crash-image.js';

export interface RecorderOptions {
  /**
   * Mutation testing: an fsync for which this returns true still happens on disk but counts for
   * nothing in the model — exactly as if the code had not made it.
   */
  readonly dropFsync?: (path: string, trace: readonly RecordedOp[]) => boolean;
}

/** A flag string of `open()` as the numeric flags it stands for (only the ones the code uses). */
function numericFlags(flags: number | string): number {
  if (typeof flags === 'number') return flags;
  const table: Record<string, number> = {
    r: constants.O_RDONLY,
    'r+': constants.O_RDWR,
    w: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC,
    wx: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_EXCL,
    a: constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND,
    ax: constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_EXCL,
  };
  const numeric = table[flags];
  if (numeric === undefined) throw new Error(`crash-fs: open flags "${flags}" are not modelled`);
  return numeric;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** A `DurableFs` that does each call for real and records it on the model (see above). */
export class CrashRecorder implements DurableFs {
  readonly trace: RecordedOp[] = [];
  private readonly ids = new Map<string, NodeId>();
  private next = 1;
  private readonly initial: Image;

  constructor(
    readonly home: string,
    private readonly options: RecorderOptions = {},
  ) {
    this.initial = scanTree(home, this.ids, () => this.next++);
  }

  /** A marker in the trace (e.g. "the receipt reached the client"). */
  mark(label: string): void {
    this.record({ kind: 'mark', label }, '', `mark: ${label}`);
  }

  /** How many operations preceded the marker `label`. */
  markIndex(label: string): number {
    const index = this.trace.findIndex((op) => op.kind === 'mark' && op.label === label);
    if (index < 0) throw new Error(`crash-fs: no mark "${label}"`);
    return index;
  }

  // ---- DurableFs ----------------------------------------------------------------------------

  async open(path: string, flags: number | string, mode?: number): Promise<DurableHandle> {
    const numeric = numericFlags(flags);
    const existed = lstatOrUndefined(path) !== undefined;
    const handle = await nodeDurableFs.open(path, flags, mode);
    try {
      const stats = await handle.stat();
      let node: NodeId;
      if (!existed && (numeric & constants.O_CREAT) !== 0) {
        node = this.fresh(stats);
        this.record(
          {
            kind: 'create',
            dir: this.idOf(dirname(path)),
            name: basename(path),
            node,
            type: 'file',
            mode: stats.mode & 0o7777,
          },
          path,
          'create',
        );
      } else {
        node = this.known(stats, path);
        if ((numeric & constants.O_TRUNC) !== 0 && stats.isFile()) {
          this.record({ kind: 'truncate', node, size: 0 }, path, 'truncate to 0 at open');
        }
      }
      return this.wrap(handle, node, path, (numeric & constants.O_APPEND) !== 0);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async rename(from: string, to: string): Promise<void> {
    const node = this.known(lstatSync(from), from);
    const fromDir = this.idOf(dirname(from));
    const toDir = this.idOf(dirname(to));
    await nodeDurableFs.rename(from, to);
    this.record(
      { kind: 'rename', fromDir, fromName: basename(from), toDir, toName: basename(to), node },
      to,
      `rename from ${this.shown(from)}`,
    );
  }

  async link(existing: string, created: string): Promise<void> {
    const node = this.known(lstatSync(existing), existing);
    const dir = this.idOf(dirname(created));
    await nodeDurableFs.link(existing, created);
    this.record(
      { kind: 'link', dir, name: basename(created), node },
      created,
      `link to ${this.shown(existing)}`,
    );
  }

  async unlink(path: string): Promise<void> {
    const dir = this.idOf(dirname(path));
    await nodeDurableFs.unlink(path);
    this.record({ kind: 'unlink', dir, name: basename(path) }, path, 'unlink');
  }

  async mkdir(
    path: string,
    options: { recursive?: boolean; mode?: number },
  ): Promise<string | undefined> {
    const missing: string[] = [];
    for (let at = path; lstatOrUndefined(at) === undefined; at = dirname(at)) missing.unshift(at);
    const made = await nodeDurableFs.mkdir(path, options);
    for (const dir of missing) this.recordMkdir(dir);
    return made;
  }

  mkdirSync(path: string, options: { mode: number }): void {
    nodeDurableFs.mkdirSync(path, options);
    this.recordMkdir(path);
  }

  fsyncDirectorySync(path: string): void {
    const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.recordFsync(this.idOf(path), path);
  }

  // ---- crash states ---------------------------------------------------------------------------

  /** The trace fully applied to the initial image must be the tree on disk now. */
  verifyAgainstDisk(): void {
    let n = 1;
    const modelled = listing(applyTrace(this.initial, this.trace, this.trace.length));
    const actual = listing(scanTree(this.home, new Map(), () => n++));
    const missing = actual.filter((line) => !modelled.includes(line));
    const extra = modelled.filter((line) => !actual.includes(line));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `crash-fs: the trace does not rebuild the disk (a write went around the seam?)\n  on disk only: ${missing.join('\n    ')}\n  in the model only: ${extra.join('\n    ')}`,
      );
    }
  }

  /** Every state a power loss after each recorded operation could leave. */
  crashStates(options: CrashStateOptions = {}): Generator<CrashState> {
    return crashStates(this.initial, this.trace, options);
  }

  // ---- internals ----------------------------------------------------------------------------

  private shown(path: string): string {
    const rel = relative(this.home, path);
    if (rel.startsWith('..')) throw new Error(`crash-fs: ${path} is outside the recorded home`);
    return rel === '' ? '~' : `~/${rel.split(sep).join('/')}`;
  }

  private record(body: OpBody, path: string, what: string): void {
    this.trace.push({ ...body, path: path === '' ? '' : this.shown(path), what });
  }

  private recordFsync(node: NodeId, path: string): void {
    const dropped = this.options.dropFsync?.(this.shown(path), this.trace) ?? false;
    this.record({ kind: 'fsync', node, dropped }, path, dropped ? 'fsync (dropped)' : 'fsync');
  }

  private recordMkdir(path: string): void {
    const stats = lstatSync(path);
    this.record(
      {
        kind: 'create',
        dir: this.idOf(dirname(path)),
        name: basename(path),
        node: this.fresh(stats),
        type: 'dir',
        mode: stats.mode & 0o7777,
      },
      path,
      'mkdir',
    );
  }

  /** A new inode: a fresh id, even when the filesystem reuses a freed inode number. */
  private fresh(stats: Stats): NodeId {
    const id = this.next++;
    this.ids.set(keyOf(stats), id);
    return id;
  }

  private known(stats: Stats, path: string): NodeId {
    const id = this.ids.get(keyOf(stats));
    if (id === undefined) {
      throw new Error(
        `crash-fs: ${path} was created outside the seam (the model does not know its inode)`,
      );
    }
    return id;
  }

  private idOf(path: string): NodeId {
    this.shown(path);
    return this.known(lstatSync(path), path);
  }

  private wrap(handle: DurableHandle, node: NodeId, path: string, append: boolean): DurableHandle {
    let position = 0;
    const write = async (
      bytes: Buffer,
      at: number | null | undefined,
      run: () => Promise<number>,
    ) => {
      const offset = append ? (await handle.stat()).size : (at ?? position);
      const written = await run();
      this.record(
        { kind: 'write', node, offset, data: Buffer.from(bytes.subarray(0, written)) },
        path,
        `write @${offset}+${written}`,
      );
      if (!append && (at === null || at === undefined)) position = offset + written;
    };
    const toBuffer = (data: unknown, encoding?: BufferEncoding): Buffer => {
      if (typeof data === 'string') return Buffer.from(data, encoding ?? 'utf8');
      if (data instanceof Uint8Array)
        return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      throw new Error('crash-fs: only strings and Uint8Arrays are modelled as file data');
    };
    const encodingOf = (options: unknown): BufferEncoding | undefined =>
      typeof options === 'string'
        ? (options as BufferEncoding)
        : ((options as { encoding?: BufferEncoding } | undefined)?.encoding ?? undefined);
    const modelled: Record<string, unknown> = {
      writeFile: async (data: string | Uint8Array, options?: unknown) => {
        const bytes = toBuffer(data, encodingOf(options));
        await write(bytes, undefined, async () => {
          await handle.writeFile(bytes);
          return bytes.length;
        });
      },
      appendFile: async (data: string | Uint8Array, options?: unknown) => {
        const bytes = toBuffer(data, encodingOf(options));
        await write(bytes, undefined, async () => {
          await handle.appendFile(bytes);
          return bytes.length;
        });
      },
      write: async (data: string | Uint8Array, ...args: unknown[]) => {
        let bytes: Buffer;
        let at: number | null | undefined;
        if (typeof data === 'string') {
          bytes = toBuffer(data, args[1] as BufferEncoding | undefined);
          at = args[0] as number | null | undefined;
        } else {
          const whole = toBuffer(data);
          const named =
            typeof args[0] === 'object' && args[0] !== null
              ? (args[0] as { offset?: number; length?: number; position?: number | null })
              : {
                  offset: args[0] as number | undefined,
                  length: args[1] as number | undefined,
                  position: args[2] as number | null | undefined,
                };
          const offset = named.offset ?? 0;
          bytes = whole.subarray(offset, offset + (named.length ?? whole.length - offset));
          at = named.position;
        }
        let result: { bytesWritten: number } | undefined;
        await write(bytes, at, async () => {
          result = await handle.write(bytes, 0, bytes.length, at ?? null);
          return result.bytesWritten;
        });
        return result;
      },
      truncate: async (size = 0) => {
        await handle.truncate(size);
        this.record({ kind: 'truncate', node, size }, path, `truncate to ${size}`);
      },
      sync: async () => {
        await handle.sync();
        this.recordFsync(node, path);
      },
      datasync: async () => {
        await handle.datasync();
        this.recordFsync(node, path);
      },
      chmod: async (mode: number) => {
        await handle.chmod(mode);
        this.record(
          { kind: 'chmod', node, mode: mode & 0o7777 },
          path,
          `chmod ${mode.toString(8)}`,
        );
      },
      // Ownership is not what a power loss loses or tears: passed through, not modelled.
      chown: (uid: number, gid: number) => handle.chown(uid, gid),
    };
    const passThrough = new Set<PropertyKey>(['fd', 'stat', 'read', 'readFile', 'close']);
    return new Proxy(handle, {
      get(target, property) {
        if (typeof property === 'string' && Object.hasOwn(modelled, property)) {
          return modelled[property];
        }
        if (property === 'then') return undefined; // not a thenable: `await open()` must not probe it
        if (passThrough.has(property) || typeof property === 'symbol') {
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function'
            ? (value as (...a: unknown[]) => unknown).bind(target)
            : value;
        }
        throw new Error(`crash-fs: FileHandle.${String(property)} is not modelled; model it first`);
      },
    });
  }
}
