/**
 * git, through `execa('git')` behind a small interface: the repository is fleet's state store
 * (principle 1), and everything fleet asks of it goes through here. execa is imported lazily so
 * commands that never touch git do not pay for loading it.
 */
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

export function createGit(repo: string): Git {
  const fail = (args: readonly string[], stderr: string, exitCode: number): FleetError => {
    const why = stderr.trim().split('\n')[0] || `exit ${exitCode}`;
    return new FleetError('REPO_INVALID', `git ${args[0] ?? ''} failed in ${repo}: ${why}`);
  };
  return {
    async runBytes(args, options = {}) {
      const { execa } = await import('execa');
      const result = await execa('git', ['-C', repo, ...args], {
        reject: false,
        input: options.input,
        encoding: 'buffer',
        env: { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
        stripFinalNewline: false,
      });
      if (result.exitCode !== 0) {
        throw fail(args, Buffer.from(result.stderr).toString('utf8'), result.exitCode ?? -1);
      }
      return Buffer.from(result.stdout);
    },
    async run(args, options = {}) {
      const { execa } = await import('execa');
      const result = await execa('git', ['-C', repo, ...args], {
        reject: false,
        input: options.input,
        env: {
          // Never prompt (no stdin in CI, no credential helpers popping up).
          GIT_TERMINAL_PROMPT: '0',
          LC_ALL: 'C',
        },
        extendEnv: true,
        stripFinalNewline: false,
      });
      const out: GitResult = {
        stdout: result.stdout,
        stderr: result.stderr,
        exitCode: result.exitCode ?? -1,
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
