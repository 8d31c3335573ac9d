/**
 * Node's compile cache for the CLI's own process (contract §14, "Status";
 * docs/adr/0025-oclif-and-core-run-through-require.md): since Node.js 22.1,
 * `module.enableCompileCache(dir)` keeps the code V8 compiled for each module — ES modules and the
 * CommonJS file of oclif in core's bundle alike — between runs, so a `fleet` call stops parsing and
 * compiling oclif and core on every start. Node.js 20 has none: there every call compiles them.
 *
 * Node's default directory is one in the system temporary directory, shared by every user of the
 * machine. Compiled code in the cache is code the process runs, so fleet keeps it in its own cache
 * directory (oclif's: `FLEET_CACHE_DIR`, else the platform's per-user cache folder) and uses it only
 * when that folder is a real directory of the user's own that nobody else can write to. Node and
 * V8 check every entry against its source text, so an upgraded or edited file is compiled afresh.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off (Node's own switch, honoured before any file is
 * touched).
 */
import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * What Node.js 22.1 and later add to `node:module` (the type definitions follow Node 20, the
 * oldest Node fleet supports, so they do not declare it).
 */
interface CompileCacheApi {
  readonly enableCompileCache?: EnableCompileCache;
  readonly getCompileCacheDir?: () => string | undefined;
  readonly constants?: {
    readonly compileCacheStatus?: { readonly ENABLED: number; readonly ALREADY_ENABLED: number };
  };
}
export type EnableCompileCache = (directory: string) => {
  readonly status: number;
  readonly message?: string;
};
const nodeModule = module as typeof module & CompileCacheApi;
/** Node's documented values, for an injected `enable` on a Node.js that lacks the constants. */
const STATUS = nodeModule.constants?.compileCacheStatus ?? { ENABLED: 1, ALREADY_ENABLED: 2 };

/** The folder, inside fleet's cache directory, that holds the compiled code. */
export const COMPILE_CACHE_FOLDER = 'v8-compile-cache';

/**
 * What became of the cache: `enabled`/`already-enabled` say what Node's module cache did (in
 * `directory`, the user's own `NODE_COMPILE_CACHE` one when that was set); `unsupported` is a
 * Node.js before 22.1.
 */
export type CompileCacheOutcome =
  | { readonly status: 'enabled' | 'already-enabled'; readonly directory: string }
  | { readonly status: 'unsupported' }
  | { readonly status: 'disabled' }
  | { readonly status: 'refused' | 'failed'; readonly directory: string; readonly reason: string };

export interface CacheLocation {
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
  readonly home: string;
}

/**
 * fleet's cache directory, as oclif computes its `config.cacheDir` for the bin `fleet`, so that the
 * compile cache sits beside whatever else oclif keeps there.
 */
export function fleetCacheDirectory({ env, platform, home }: CacheLocation): string {
  const paths = platform === 'win32' ? path.win32 : path.posix;
  const join = (...parts: string[]) => paths.join(...parts);
  if (env.FLEET_CACHE_DIR) return env.FLEET_CACHE_DIR;
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'fleet');
  const base =
    env.XDG_CACHE_HOME || (platform === 'win32' && env.LOCALAPPDATA) || join(home, '.cache');
  return join(base, 'fleet');
}

/**
 * Why a directory may not hold code this process will run, or `undefined` when it may: it must be
 * a directory (not a link to one), owned by the running user and writable by no one else. On
 * Windows, where modes say nothing of who may write, the per-user profile's ACLs decide.
 */
export function unsafeDirectoryReason(
  stats: Pick<Stats, 'isDirectory' | 'isSymbolicLink' | 'uid' | 'mode'>,
  uid: number | undefined,
): string | undefined {
  if (stats.isSymbolicLink()) return 'it is a symbolic link';
  if (!stats.isDirectory()) return 'it is not a directory';
  if (uid === undefined) return undefined;
  if (stats.uid !== uid) return `it belongs to uid ${stats.uid}, not ${uid}`;
  if ((stats.mode & 0o022) !== 0) {
    return `others may write to it (mode ${(stats.mode & 0o777).toString(8).padStart(3, '0')})`;
  }
  return undefined;
}

export interface EnableOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
  readonly home?: string;
  readonly uid?: number;
  /** Node's `module.enableCompileCache`; absent before Node.js 22.1. */
  readonly enable?: EnableCompileCache | undefined;
  /** Node's `module.getCompileCacheDir`: set when `NODE_COMPILE_CACHE` already turned it on. */
  readonly currentDirectory?: () => string | undefined;
}

/**
 * Turns the compile cache on for this process, in fleet's own private directory, before the entry
 * imports oclif and core. Never throws: a cache that cannot be used costs speed, not correctness.
 */
export function enableCompileCache(options: EnableOptions = {}): CompileCacheOutcome {
  const enable = 'enable' in options ? options.enable : nodeModule.enableCompileCache;
  const env = options.env ?? process.env;
  if (env.NODE_DISABLE_COMPILE_CACHE) return { status: 'disabled' };
  if (typeof enable !== 'function') return { status: 'unsupported' };
  const directory = path.join(
    fleetCacheDirectory({
      env,
      platform: options.platform ?? process.platform,
      home: options.home ?? (env.HOME || homedir()),
    }),
    COMPILE_CACHE_FOLDER,
  );
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const reason = unsafeDirectoryReason(lstatSync(directory), options.uid ?? process.getuid?.());
    if (reason !== undefined) return { status: 'refused', directory, reason };
    // The user's own NODE_COMPILE_CACHE wins: Node enabled it before this ran.
    const current = (options.currentDirectory ?? nodeModule.getCompileCacheDir)?.();
    if (current) return { status: 'already-enabled', directory: current };
    const result = enable(directory);
    if (result.status === STATUS.ENABLED) return { status: 'enabled', directory };
    if (result.status === STATUS.ALREADY_ENABLED) return { status: 'already-enabled', directory };
    return { status: 'failed', directory, reason: result.message ?? 'Node refused the directory' };
  } catch (error) {
    return { status: 'failed', directory, reason: (error as Error).message };
  }
}
