/**
 * What a shell makes of one file named like a tool in a PATH directory, read without running it
 * (docs/version.md, "Which executable runs"). A shell's command search (bash's
 * `find_user_command`, zsh's `hashcmd`) passes over an entry that is not an executable regular
 * file once symbolic links are followed — a dangling launcher link, a directory, a file without
 * an execute bit — and takes the first one that is. If that one is a script whose `#!` interpreter
 * is gone (execve(2): ENOENT, bash: "bad interpreter"), the search is over: the command fails and
 * a healthy install later on PATH is never reached — the ADR's removed Python shadowing a good
 * install. Such an entry is `dead`, never run, never `current`.
 */
import { constants } from 'node:fs';
import { access, lstat, open, readlink, stat } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';
import type { Platform } from '@fleet/core/node';

/**
 * Nested interpreters followed at most: Linux lets an interpreter be a script itself up to this
 * depth (fs/exec.c, the binfmt recursion limit), and fails the exec beyond it (ELOOP).
 */
export const MAX_INTERPRETER_DEPTH = 4;
/** The `#!` line is read from this many first bytes (Linux's BINPRM_BUF_SIZE is 256). */
const SHEBANG_BYTES = 256;

export type Inspection =
  /** The shell passes over it and searches on (`detail`: why it cannot run). */
  | { readonly kind: 'skipped'; readonly detail: string }
  /** The shell takes it and the exec fails: nothing later on PATH runs instead. */
  | { readonly kind: 'dead'; readonly detail: string }
  /** The shell takes it and it can start. */
  | { readonly kind: 'runs' };

/** The file names a command may have in one directory (`.exe`, `.cmd`… on Windows). */
export function candidates(name: string, platform: Platform): string[] {
  if (platform !== 'win32') return [name];
  return [name, ...['.exe', '.cmd', '.bat', '.com'].map((ext) => `${name}${ext}`)];
}

/** A `#!` line's interpreter and its one optional argument (as Linux passes it: the rest). */
export interface Shebang {
  readonly interpreter: string;
  readonly argument: string | null;
}

/** The `#!` line at the start of `head`, or `null` when it does not start with one. */
export function parseShebang(head: string): Shebang | null {
  if (!head.startsWith('#!')) return null;
  const line = (head.slice(2).split('\n')[0] ?? '').replace(/\r$/, '').trim();
  const match = /^(\S*)\s*(.*)$/.exec(line);
  const interpreter = match?.[1] ?? '';
  const argument = match?.[2] ?? '';
  return { interpreter, argument: argument === '' ? null : argument };
}

/**
 * The command `/usr/bin/env` looks up from a `#!/usr/bin/env [-S] [NAME=value…] command` line:
 * its options and assignments skipped (env(1)), or `null` when it names none.
 */
export function envCommand(argument: string | null): string | null {
  if (argument === null) return null;
  for (const word of argument.split(/\s+/)) {
    if (word === '' || word.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    return word;
  }
  return null;
}

async function readHead(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const buffer = Buffer.alloc(SHEBANG_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SHEBANG_BYTES, 0);
    return buffer.subarray(0, bytesRead).toString('latin1');
  } finally {
    await handle.close();
  }
}

/** Why `path` is not an executable regular file once links are followed, or `null` if it is. */
async function whyNotExecutable(path: string): Promise<string | null> {
  let stats;
  try {
    stats = await stat(path);
  } catch {
    const link = await lstat(path).then(
      (l) => l.isSymbolicLink(),
      () => false,
    );
    if (!link) return 'does not exist';
    const target = await readlink(path).catch(() => '?');
    return `a broken symbolic link to ${target}`;
  }
  if (!stats.isFile()) return 'not a file';
  try {
    await access(path, constants.X_OK);
  } catch {
    return 'not executable';
  }
  return null;
}

/** The first executable regular file named `name` along `dirs` (what a shell runs), or `null`. */
export async function resolveOnPath(
  name: string,
  dirs: readonly string[],
  platform: Platform,
): Promise<string | null> {
  for (const dir of dirs) {
    for (const file of candidates(name, platform)) {
      const path = join(dir, file);
      if ((await whyNotExecutable(path)) === null) return path;
    }
  }
  return null;
}

/** Whether the interpreter a `#!` line names can start (itself a script: followed, bounded). */
async function interpreterProblem(
  shebang: Shebang,
  dirs: readonly string[],
  platform: Platform,
  depth: number,
): Promise<string | null> {
  const { interpreter } = shebang;
  if (interpreter === '') return 'its #! line names no interpreter';
  if (!isAbsolute(interpreter)) return `its interpreter ${interpreter} is not an absolute path`;
  const why = await whyNotExecutable(interpreter);
  if (why === 'does not exist') return `its interpreter ${interpreter} is gone`;
  if (why !== null) return `its interpreter ${interpreter} is ${why}`;
  if (basename(interpreter) === 'env') {
    const command = envCommand(shebang.argument);
    if (command !== null && !command.includes('/')) {
      const found = await resolveOnPath(command, dirs, platform);
      if (found === null)
        return `its interpreter ${command} (through ${interpreter}) is not on PATH`;
      return nested(found, dirs, platform, depth);
    }
    if (command !== null) {
      return interpreterProblem({ interpreter: command, argument: null }, dirs, platform, depth);
    }
  }
  return nested(interpreter, dirs, platform, depth);
}

/** An interpreter that is a script itself: its own interpreter must start too. */
async function nested(
  path: string,
  dirs: readonly string[],
  platform: Platform,
  depth: number,
): Promise<string | null> {
  const inner = await inspectShebang(path, dirs, platform, depth + 1);
  return inner === null ? null : `its interpreter ${path}: ${inner}`;
}

async function inspectShebang(
  path: string,
  dirs: readonly string[],
  platform: Platform,
  depth: number,
): Promise<string | null> {
  let head: string;
  try {
    head = await readHead(path);
  } catch {
    return null; // executable but not readable: the kernel may still run a binary
  }
  const shebang = parseShebang(head);
  if (shebang === null) return null;
  if (depth >= MAX_INTERPRETER_DEPTH) return 'too many nested interpreters';
  return interpreterProblem(shebang, dirs, platform, depth);
}

/**
 * What a shell does with the file at `path` when its command search reaches it, with `dirs` the
 * PATH (for `#!/usr/bin/env python3`). Windows has no `#!`: an existing file is taken as it is.
 */
export async function inspectExecutable(
  path: string,
  dirs: readonly string[],
  platform: Platform,
): Promise<Inspection> {
  const why = await whyNotExecutable(path);
  if (why !== null) return { kind: 'skipped', detail: why };
  if (platform === 'win32') return { kind: 'runs' };
  const problem = await inspectShebang(path, dirs, platform, 0);
  return problem === null ? { kind: 'runs' } : { kind: 'dead', detail: problem };
}
