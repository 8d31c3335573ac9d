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

export function createGit(repo: string): Git {
  const fail = (args: readonly string[], stderr: string, exitCode: number): FleetError => {
    const why = stderr.trim().split('\n')[0] || `exit ${exitCode}`;
    return new FleetError('REPO_INVALID', `git ${args[0] ?? ''} failed in ${repo}: ${why}`);
  };
  return {
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
