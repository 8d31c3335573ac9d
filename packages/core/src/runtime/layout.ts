/**
 * Where a node keeps its runtime generations (contract §5, §12) and the command a supervisor runs for
 * one. Shared by the controller's generation machinery and by the bootstrap adapters' node halves
 * (plugins import core only), so the layout is written down once.
 *
 *   <home>/.local/share/fleet/runtime/            (Windows: <home>/AppData/Local/fleet/runtime/)
 *     generations/<build-id>/                      immutable once staged (files 0444, dirs 0555)
 *       generation.json                            the manifest: build id, tree hash, package, commit
 *       artifact.tgz                               the artifact it was staged from (sha256 = build id)
 *       package/…                                  the unpacked `npm pack` tarball
 *     current                                      symlink -> generations/<build-id>  (Linux, macOS)
 *                                                  or a file "generations/<build-id>\n" (Windows)
 */
import { lstat, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Platform } from '../interfaces/node-context.js';
import { CONTROLLER_NODE_OPTIONS } from '../runtime-flags.js';

/** `~/`-relative runtime root, per platform. */
export const RUNTIME_DIR = '.local/share/fleet/runtime';
export const RUNTIME_DIR_WIN32 = 'AppData/Local/fleet/runtime';
export const GENERATIONS_DIR = 'generations';
export const CURRENT_POINTER = 'current';
/** Top-level names inside a generation that are fleet's, never the artifact's. */
export const GENERATION_MANIFEST = 'generation.json';
export const GENERATION_ARTIFACT = 'artifact.tgz';
/** Generation-relative path of the CLI entry in an `npm pack` tarball of `@fleet/cli`. */
export const DEFAULT_RUNTIME_ENTRY = 'package/bin/run.js';
/** A build id is the artifact's sha256, lower-case hex. */
export const BUILD_ID_PATTERN = /^[0-9a-f]{64}$/;

export interface RuntimeLayout {
  readonly root: string;
  readonly generations: string;
  readonly current: string;
  generation(buildId: string): string;
}

export function runtimeLayout(home: string, platform: Platform): RuntimeLayout {
  const relative = platform === 'win32' ? RUNTIME_DIR_WIN32 : RUNTIME_DIR;
  const root = join(home, ...relative.split('/'));
  const generations = join(root, GENERATIONS_DIR);
  return {
    root,
    generations,
    current: join(root, CURRENT_POINTER),
    generation: (buildId: string) => join(generations, buildId),
  };
}

/** What `current` holds: `generations/<build-id>` (relative, so a moved home keeps working). */
export function pointerTarget(buildId: string): string {
  return `${GENERATIONS_DIR}/${buildId}`;
}

/** The build id a pointer target names, or `null` when it names no generation. */
export function parsePointerTarget(target: string): string | null {
  const match = /(?:^|[\\/])generations[\\/]([0-9a-f]{64})[\\/]?$/.exec(target.trim());
  return match ? (match[1] ?? null) : null;
}

export type PointerState =
  | { readonly state: 'absent' }
  | {
      readonly state: 'set';
      readonly kind: 'symlink' | 'file';
      readonly buildId: string;
      readonly target: string;
    }
  | { readonly state: 'invalid'; readonly detail: string };

/**
 * Reads `current` without following it: a symlink (Linux, macOS) or a pointer file (Windows) —
 * either form is understood on every platform. Anything else, or a target that names no
 * generation, is `invalid` (never guessed).
 */
export async function readCurrentPointer(layout: RuntimeLayout): Promise<PointerState> {
  let kind: 'symlink' | 'file';
  try {
    const stats = await lstat(layout.current);
    if (stats.isSymbolicLink()) kind = 'symlink';
    else if (stats.isFile()) kind = 'file';
    else return { state: 'invalid', detail: 'current is neither a symlink nor a pointer file' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
    return {
      state: 'invalid',
      detail: `current: ${String((error as NodeJS.ErrnoException).code)}`,
    };
  }
  try {
    const target =
      kind === 'symlink'
        ? await readlink(layout.current)
        : (await readFile(layout.current, 'utf8')).slice(0, 4096);
    const buildId = parsePointerTarget(target);
    if (buildId === null) {
      return {
        state: 'invalid',
        detail: `current names no generation (${JSON.stringify(target.slice(0, 200))})`,
      };
    }
    return { state: 'set', kind, buildId, target: target.trim() };
  } catch (error) {
    // Replaced between the lstat and the read: the caller reads again.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
    return {
      state: 'invalid',
      detail: `current: ${String((error as NodeJS.ErrnoException).code)}`,
    };
  }
}

// ---- the runtime command ------------------------------------------------------------------------

export interface RuntimeCommandInput {
  /** Absolute path of the node binary that runs the CLI. */
  readonly nodePath: string;
  /** Absolute path of the generation directory. */
  readonly generationDir: string;
  /** Generation-relative entry script (default {@link DEFAULT_RUNTIME_ENTRY}). */
  readonly entry?: string;
  /** Absolute path of the node's home (the controller's `--home`). */
  readonly home: string;
  readonly nodeId: string;
  readonly port?: number;
  readonly bind?: string;
}

/**
 * The argv a supervisor runs for a generation: `<node> <CONTROLLER_NODE_OPTIONS>
 * <generation>/package/bin/run.js controller serve --home <home> --node-id <id> [--port N]
 * [--bind ADDR]`. Separators follow the generation
 * path (a Windows path stays a Windows path).
 */
export function runtimeCommand(input: RuntimeCommandInput): string[] {
  const separator =
    input.generationDir.includes('\\') && !input.generationDir.includes('/') ? '\\' : '/';
  const entry = (input.entry ?? DEFAULT_RUNTIME_ENTRY).split('/').join(separator);
  const script = `${input.generationDir.replace(/[\\/]+$/, '')}${separator}${entry}`;
  const argv = [
    input.nodePath,
    // How every supervisor runs the controller (small young generation: contract §14 idle RSS).
    ...CONTROLLER_NODE_OPTIONS,
    script,
    'controller',
    'serve',
    '--home',
    input.home,
    '--node-id',
    input.nodeId,
  ];
  if (input.port !== undefined) argv.push('--port', String(input.port));
  if (input.bind !== undefined) argv.push('--bind', input.bind);
  return argv;
}

export interface RuntimeCommandFacts {
  /** The build id of the generation the script lives in, when it lives in one. */
  readonly buildId: string | null;
  readonly nodeId: string | null;
  readonly home: string | null;
}

/**
 * The value of `--name VALUE` or `--name=VALUE` in an argv — the last one, as the CLI's parser
 * takes it; `null` when absent. How every reader of a supervised command reads its flags.
 */
export function argvFlag(argv: readonly string[], name: string): string | null {
  let value: string | null = null;
  argv.forEach((arg, index) => {
    if (arg === name) value = argv[index + 1] ?? null;
    else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
  });
  return value;
}

/** What a supervisor's argv says: the generation it runs, its `--node-id` and `--home`. */
export function describeRuntimeCommand(argv: readonly string[]): RuntimeCommandFacts {
  const flag = (name: string): string | null => argvFlag(argv, name);
  let buildId: string | null = null;
  // The script comes after the node binary and its options, before `controller serve`.
  const end = argv.indexOf('controller');
  for (const arg of argv.slice(0, end < 0 ? 3 : end)) {
    const match = /[\\/]generations[\\/]([0-9a-f]{64})[\\/]/.exec(arg);
    if (match) {
      buildId = match[1] ?? null;
      break;
    }
  }
  return { buildId, nodeId: flag('--node-id'), home: flag('--home') };
}

/** `argv` with its `--node-id` value replaced (appended when it has none). */
export function withNodeId(argv: readonly string[], nodeId: string): string[] {
  const out: string[] = [];
  let found = false;
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '--node-id' && index + 1 < argv.length) {
      out.push(arg, nodeId);
      index += 1;
      found = true;
    } else if (arg.startsWith('--node-id=')) {
      out.push(`--node-id=${nodeId}`);
      found = true;
    } else out.push(arg);
  }
  if (!found) out.push('--node-id', nodeId);
  return out;
}
