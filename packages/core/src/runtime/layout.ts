/**
 * Where a node keeps its runtime generations (contract §5, §12) and the command a supervisor runs for
 * one. Shared by the controller's generation machinery and by the bootstrap adapters' node halves
 * (plugins import core only), so the layout is written down once.
 *
 *   <home>/.local/share/fleet/runtime/            (Windows: <home>/AppData/Local/fleet/runtime/,
 *                                                  macOS: <home>/Library/Application Support/fleet/runtime/)
 *     generations/<name>/                          immutable once staged (files 0444, dirs 0555);
 *                                                  <name> is the build id, on Windows its first 16
 *                                                  hex digits ({@link generationName})
 *       generation.json                            the manifest: build id, tree hash, package, commit
 *       artifact.tgz                               the artifact it was staged from (sha256 = build id)
 *       package/…                                  the unpacked `npm pack` tarball
 *     current                                      symlink -> generations/<build-id>  (Linux, macOS)
 *                                                  or a file "generations/<build-id>\n" (Windows:
 *                                                  a file the OS never follows, so it names the
 *                                                  full build id; the directory is the short name)
 *
 * Windows paths (docs/runtime-lifecycle.md, "Windows paths"): without the long-path opt-in a path
 * has at most MAX_PATH - 1 = 259 characters (Microsoft, "Maximum Path Length Limitation"). The
 * root `C:\Users\<profile>\AppData\Local\fleet\runtime` gets {@link WIN32_ROOT_BUDGET}
 * characters, everything below it {@link WIN32_GENERATION_PATH_BUDGET}; a 64-digit build id as a
 * directory name would spend a quarter of the limit, so Windows generations are named short.
 */
import { lstat, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Platform } from '../interfaces/node-context.js';
import { CONTROLLER_NODE_OPTIONS } from '../runtime-flags.js';

/** `~/`-relative runtime root, per platform. */
export const RUNTIME_DIR = '.local/share/fleet/runtime';
export const RUNTIME_DIR_WIN32 = 'AppData/Local/fleet/runtime';
/** Where a Mac keeps an application's own data (Apple's File System Programming Guide). */
export const RUNTIME_DIR_DARWIN = 'Library/Application Support/fleet/runtime';
export const GENERATIONS_DIR = 'generations';
export const CURRENT_POINTER = 'current';
/** Top-level names inside a generation that are fleet's, never the artifact's. */
export const GENERATION_MANIFEST = 'generation.json';
export const GENERATION_ARTIFACT = 'artifact.tgz';
/** Generation-relative path of the CLI entry in an `npm pack` tarball of `@fleet/cli`. */
export const DEFAULT_RUNTIME_ENTRY = 'package/bin/run.js';
/** A build id is the artifact's sha256, lower-case hex. */
export const BUILD_ID_PATTERN = /^[0-9a-f]{64}$/;
/**
 * Hex digits of the build id that name a generation's directory on Windows: 64 bits, so two
 * builds a node holds share a name with negligible odds — and when they do, the second is refused
 * (`GENERATION_INVALID`: the directory exists and its manifest names another build), never
 * written over.
 */
export const WIN32_GENERATION_NAME_LENGTH = 16;
/** A generation directory's name: a build id, or (Windows) its first 16 hex digits. */
export const GENERATION_NAME_PATTERN = /^(?:[0-9a-f]{64}|[0-9a-f]{16})$/;
/** Longest path a Windows API takes without the `\\?\` prefix or the long-path opt-in. */
export const WIN32_MAX_PATH_CHARS = 259;
/**
 * Characters the Windows runtime root may take: `C:\Users\` (9) + a profile folder of up to 40
 * (a 20-character user name, `.` and a 15-character NetBIOS domain, and a `.000`-style suffix) +
 * `\AppData\Local\fleet\runtime` (28) = 77, rounded up.
 */
export const WIN32_ROOT_BUDGET = 80;
/**
 * Characters any path below the runtime root may take (`generations\<name>\package\…` and the
 * staging directory's), checked on the real packed artifact by test/integration's path-budget
 * test. 80 + 150 = 230 leaves 29 of the 259 to spare.
 */
export const WIN32_GENERATION_PATH_BUDGET = 150;

/** The directory name of a build's generation on `platform` (pure). */
export function generationName(buildId: string, platform: Platform): string {
  return platform === 'win32' ? buildId.slice(0, WIN32_GENERATION_NAME_LENGTH) : buildId;
}

/** Whether a generation directory's `name` is the one `buildId` gets on some platform (pure). */
export function isGenerationNameOf(name: string, buildId: string): boolean {
  return (
    name === buildId || (name.length === WIN32_GENERATION_NAME_LENGTH && buildId.startsWith(name))
  );
}

export interface RuntimeLayout {
  readonly root: string;
  readonly generations: string;
  readonly current: string;
  /** The directory of a build's generation (its name per {@link generationName}). */
  generation(buildId: string): string;
}

export function runtimeLayout(home: string, platform: Platform): RuntimeLayout {
  const relative =
    platform === 'win32'
      ? RUNTIME_DIR_WIN32
      : platform === 'darwin'
        ? RUNTIME_DIR_DARWIN
        : RUNTIME_DIR;
  const root = join(home, ...relative.split('/'));
  const generations = join(root, GENERATIONS_DIR);
  return {
    root,
    generations,
    current: join(root, CURRENT_POINTER),
    generation: (buildId: string) => join(generations, generationName(buildId, platform)),
  };
}

/**
 * The build id a generation directory's name stands for: the name itself when it is a build id,
 * else (a Windows short name) the `buildId` its `generation.json` records — when that id is one the
 * name belongs to; `null` otherwise (no generation, or not one fleet staged). Reads one small file.
 */
export async function resolveGenerationName(
  layout: RuntimeLayout,
  name: string,
): Promise<string | null> {
  if (BUILD_ID_PATTERN.test(name)) return name;
  if (!GENERATION_NAME_PATTERN.test(name)) return null;
  try {
    const text = await readFile(join(layout.generations, name, GENERATION_MANIFEST), 'utf8');
    const buildId = (JSON.parse(text) as { buildId?: unknown }).buildId;
    return typeof buildId === 'string' &&
      BUILD_ID_PATTERN.test(buildId) &&
      isGenerationNameOf(name, buildId)
      ? buildId
      : null;
  } catch {
    return null;
  }
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

/**
 * What a supervisor's argv says: the generation it runs, its `--node-id` and `--home`. On Windows
 * the script's directory carries the short name ({@link generationName}): `buildId` is then those
 * 16 digits, and the adapter that observed the command resolves it from the generation's manifest
 * ({@link resolveGenerationName}).
 */
export function describeRuntimeCommand(argv: readonly string[]): RuntimeCommandFacts {
  const flag = (name: string): string | null => argvFlag(argv, name);
  let buildId: string | null = null;
  // The script comes after the node binary and its options, before `controller serve`.
  const end = argv.indexOf('controller');
  for (const arg of argv.slice(0, end < 0 ? 3 : end)) {
    const match = /[\\/]generations[\\/]([0-9a-f]{64}|[0-9a-f]{16})[\\/]/.exec(arg);
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
