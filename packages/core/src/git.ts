/**
 * git, through `node:child_process` behind a small interface: the repository is fleet's state
 * store (principle 1), and everything fleet asks of it goes through here. A plain `spawn` rather
 * than a process library: nothing here needs more, and loading one (execa: over a hundred modules)
 * cost every git-using verb more than its git processes (contract §14, "means").
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { FleetError } from './errors.js';

export interface GitResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export interface Git {
  /** Runs `git -C <repo> <args>`; throws `REPO_INVALID` with git's message on failure. */
  run(
    args: readonly string[],
    options?: { input?: string; allowFailure?: boolean },
  ): Promise<GitResult>;
  /** As `run`, with stdout as bytes (blob contents are not necessarily text). */
  runBytes(args: readonly string[], options?: { input?: string }): Promise<Buffer>;
  /**
   * One `git cat-file --batch` process for a conversation: each read's names are answered before
   * the next read is written, so a later question can use an earlier answer (HEAD's commit id,
   * then paths at that commit) without another process. Close it when done.
   */
  catFile(): CatFileSession;
}

/** One object `git cat-file --batch` printed. */
export interface CatFileEntry {
  readonly oid: string;
  readonly type: string;
  readonly content: Buffer;
}

export interface CatFileSession {
  /**
   * The objects `names` name (an object id, `<rev>`, `<rev>:<path>`), in order; `null` for one git
   * says is missing or ambiguous. Rejects with `REPO_INVALID` when the process failed.
   */
  read(names: readonly string[]): Promise<(CatFileEntry | null)[]>;
  /** Ends the process (its stdin closed); reads still pending reject. */
  close(): void;
}

/** Identity used for commits fleet makes when the operator has configured none. */
const FALLBACK_IDENTITY = { name: 'fleet', email: 'fleet@localhost' };

interface RawResult {
  readonly stdout: Buffer;
  readonly stderr: string;
  /** git's exit code; -1 when it could not be started or was killed by a signal. */
  readonly exitCode: number;
}

/** One git process: stdin is `input` (or closed), stdout and stderr collected whole. */
function spawnGit(
  repo: string,
  args: readonly string[],
  input: string | undefined,
): Promise<RawResult> {
  return new Promise((resolve) => {
    const child = spawn('git', ['-C', repo, ...args], {
      // Never prompt (no stdin in CI, no credential helpers popping up); C locale messages.
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let failure: Error | undefined;
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', (error) => {
      failure = error; // not started (ENOENT: no git on the PATH)
    });
    if (input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // git may exit before reading all of it
      child.stdin.end(input);
    }
    child.once('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      resolve({
        stdout: Buffer.concat(out),
        stderr: failure ? `${failure.message}\n${stderr}` : stderr,
        exitCode: failure || code === null ? -1 : code,
      });
    });
  });
}

/**
 * The entries at the start of `buffer` answering `count` names: those complete so far, the offset
 * after the last one, and how long `buffer` must grow before the next one can be complete (so a
 * large blob arriving in many chunks is joined once, not once per chunk). A `--batch` answer is a
 * line `<oid> <type> <size>`, then the content and a newline; or a line `<name> missing` (or
 * `ambiguous`).
 */
export function takeCatFileEntries(
  buffer: Buffer,
  count: number,
): { entries: (CatFileEntry | null)[]; offset: number; needed: number } {
  const entries: (CatFileEntry | null)[] = [];
  let offset = 0;
  let needed = 0;
  while (entries.length < count) {
    const eol = buffer.indexOf(0x0a, offset);
    if (eol < 0) {
      needed = buffer.length + 1;
      break;
    }
    const header = buffer.subarray(offset, eol).toString('utf8');
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      entries.push(null);
      offset = eol + 1;
      continue;
    }
    const [oid = '', type = '', size] = header.split(' ');
    const length = Number(size);
    if (!Number.isSafeInteger(length)) throw new Error(`unexpected git cat-file header: ${header}`);
    if (buffer.length < eol + 1 + length + 1) {
      needed = eol + 1 + length + 1; // the content, then a newline, are not all there yet
      break;
    }
    entries.push({ oid, type, content: buffer.subarray(eol + 1, eol + 1 + length) });
    offset = eol + 1 + length + 1;
  }
  return { entries, offset, needed };
}

function openCatFile(
  repo: string,
  fail: (stderr: string, exitCode: number) => Error,
): CatFileSession {
  const child = spawn('git', ['-C', repo, 'cat-file', '--batch'], {
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new CatFileProcess(child, fail);
}

/** One read waiting for its entries. */
interface PendingRead {
  readonly count: number;
  /** The entries of this read parsed so far (a large read arrives in many chunks). */
  readonly entries: (CatFileEntry | null)[];
  readonly resolve: (entries: (CatFileEntry | null)[]) => void;
  readonly reject: (error: Error) => void;
}

/** A running `git cat-file --batch`: reads answered in turn, as its output arrives. */
class CatFileProcess implements CatFileSession {
  private readonly pending: PendingRead[] = [];
  // The bytes not parsed yet: what follows the last complete entry.
  private buffered: Buffer = Buffer.alloc(0);
  // Chunks not yet joined onto `buffered`, their length, and the length worth parsing again at.
  private chunks: Buffer[] = [];
  private available = 0;
  private needed = 0;
  private ended: Error | undefined;
  private readonly err: Buffer[] = [];

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    fail: (stderr: string, exitCode: number) => Error,
  ) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.available += chunk.length;
      if (this.available >= this.needed) this.settle();
    });
    child.stderr.on('data', (chunk: Buffer) => this.err.push(chunk));
    child.stdin.on('error', () => undefined); // git may have exited: the close below says why
    child.once('error', (error) => this.end(fail(error.message, -1)));
    child.once('close', (code) => {
      this.settle();
      this.end(fail(Buffer.concat(this.err).toString('utf8'), code ?? -1));
    });
  }

  read(names: readonly string[]): Promise<(CatFileEntry | null)[]> {
    if (names.some((name) => name.includes('\n'))) {
      return Promise.reject(new Error('a cat-file name cannot hold a newline'));
    }
    if (names.length === 0) return Promise.resolve([]);
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      this.pending.push({ count: names.length, entries: [], resolve, reject });
      this.child.stdin.write(names.map((name) => `${name}\n`).join(''));
    });
  }

  close(): void {
    this.child.stdin.end();
  }

  // Each complete entry is taken off as soon as it is there, so a read of a thousand blobs
  // arriving in a hundred chunks parses and copies each byte once, not once per chunk.
  private settle(): void {
    if (this.chunks.length > 0) {
      this.buffered = Buffer.concat([this.buffered, ...this.chunks]);
      this.chunks = [];
    }
    while (this.pending.length > 0) {
      const next = this.pending[0] as PendingRead;
      let taken: ReturnType<typeof takeCatFileEntries>;
      try {
        taken = takeCatFileEntries(this.buffered, next.count - next.entries.length);
      } catch (error) {
        this.end(error as Error);
        return;
      }
      for (const entry of taken.entries) next.entries.push(entry);
      this.buffered = this.buffered.subarray(taken.offset);
      this.available = this.buffered.length;
      if (next.entries.length < next.count) {
        this.needed = taken.needed - taken.offset;
        return;
      }
      this.needed = 0;
      this.pending.shift();
      next.resolve(next.entries);
    }
  }

  private end(error: Error): void {
    this.ended ??= error;
    for (const waiting of this.pending.splice(0)) waiting.reject(this.ended);
    if (this.child.exitCode === null) this.child.kill();
  }
}

export function createGit(repo: string): Git {
  const fail = (args: readonly string[], stderr: string, exitCode: number): FleetError => {
    const why = stderr.trim().split('\n')[0] || `exit ${exitCode}`;
    return new FleetError('REPO_INVALID', `git ${args[0] ?? ''} failed in ${repo}: ${why}`);
  };
  return {
    catFile: () => openCatFile(repo, (stderr, exitCode) => fail(['cat-file'], stderr, exitCode)),
    async runBytes(args, options = {}) {
      const result = await spawnGit(repo, args, options.input);
      if (result.exitCode !== 0) throw fail(args, result.stderr, result.exitCode);
      return result.stdout;
    },
    async run(args, options = {}) {
      const result = await spawnGit(repo, args, options.input);
      const out: GitResult = {
        stdout: result.stdout.toString('utf8'),
        stderr: result.stderr,
        exitCode: result.exitCode,
      };
      if (out.exitCode !== 0 && !options.allowFailure) throw fail(args, out.stderr, out.exitCode);
      return out;
    },
  };
}

/**
 * `-c user.name=… -c user.email=…` when git has no identity configured for `repo`, so fleet's own
 * commits (init, adopt) work on a fresh machine; an operator's configured identity always wins.
 */
export async function identityArgs(git: Git): Promise<string[]> {
  const email = await git.run(['config', '--get', 'user.email'], { allowFailure: true });
  const name = await git.run(['config', '--get', 'user.name'], { allowFailure: true });
  const args: string[] = [];
  if (name.exitCode !== 0) args.push('-c', `user.name=${FALLBACK_IDENTITY.name}`);
  if (email.exitCode !== 0) args.push('-c', `user.email=${FALLBACK_IDENTITY.email}`);
  return args;
}
