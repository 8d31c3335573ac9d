/**
 * git, through `node:child_process` behind a small interface: the repository is fleet's state
 * store (principle 1), and everything fleet asks of it goes through here. A plain `spawn` rather
 * than a process library: nothing here needs more, and loading one (execa: over a hundred modules)
 * cost every git-using verb more than its git processes (contract §14, "means").
 */
import { spawn } from 'node:child_process';
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
  interface Pending {
    readonly count: number;
    /** The entries of this read parsed so far (a large read arrives in many chunks). */
    readonly entries: (CatFileEntry | null)[];
    readonly resolve: (entries: (CatFileEntry | null)[]) => void;
    readonly reject: (error: Error) => void;
  }
  const pending: Pending[] = [];
  // The bytes not parsed yet: what follows the last complete entry.
  let buffered: Buffer = Buffer.alloc(0);
  // Chunks not yet joined onto `buffered`, their length, and the length worth parsing again at.
  let chunks: Buffer[] = [];
  let available = 0;
  let needed = 0;
  let ended: Error | undefined;
  const err: Buffer[] = [];
  // Each complete entry is taken off as soon as it is there, so a read of a thousand blobs
  // arriving in a hundred chunks parses and copies each byte once, not once per chunk.
  const settle = (): void => {
    if (chunks.length > 0) {
      buffered = Buffer.concat([buffered, ...chunks]);
      chunks = [];
    }
    while (pending.length > 0) {
      const next = pending[0] as Pending;
      let taken: ReturnType<typeof takeCatFileEntries>;
      try {
        taken = takeCatFileEntries(buffered, next.count - next.entries.length);
      } catch (error) {
        end(error as Error);
        return;
      }
      for (const entry of taken.entries) next.entries.push(entry);
      buffered = buffered.subarray(taken.offset);
      available = buffered.length;
      if (next.entries.length < next.count) {
        needed = taken.needed - taken.offset;
        return;
      }
      needed = 0;
      pending.shift();
      next.resolve(next.entries);
    }
  };
  const end = (error: Error): void => {
    ended ??= error;
    for (const waiting of pending.splice(0)) waiting.reject(ended);
    if (child.exitCode === null) child.kill();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    available += chunk.length;
    if (available >= needed) settle();
  });
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdin.on('error', () => undefined); // git may have exited: the close below says why
  child.once('error', (error) => end(fail(error.message, -1)));
  child.once('close', (code) => {
    settle();
    end(fail(Buffer.concat(err).toString('utf8'), code ?? -1));
  });
  return {
    read(names) {
      if (names.some((name) => name.includes('\n'))) {
        return Promise.reject(new Error('a cat-file name cannot hold a newline'));
      }
      if (names.length === 0) return Promise.resolve([]);
      if (ended) return Promise.reject(ended);
      return new Promise((resolve, reject) => {
        pending.push({ count: names.length, entries: [], resolve, reject });
        child.stdin.write(names.map((name) => `${name}\n`).join(''));
      });
    },
    close() {
      child.stdin.end();
    },
  };
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
