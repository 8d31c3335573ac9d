/**
 * Runs a CommonJS bundle with V8's code cache, kept in fleet's private cache directory (contract
 * §14; docs/adr/0012-oclif-runs-from-a-code-cached-bundle.md). Node.js 20 has no compile cache:
 * every `fleet` call parsed and compiled oclif's ~460 KB again, 20 ms of each start. A `vm.Script`
 * takes the code V8 produced in an earlier run (`cachedData`) and skips that work; V8 itself
 * refuses data made for another source text, V8 version or set of flags, and then the file is
 * compiled as usual and its cache written afresh.
 *
 * Compiled code is code the process runs, so the cache is read only from a directory the CLI's
 * entry has checked (a real directory of the user's own that nobody else may write to) and handed
 * over under {@link CODE_CACHE_DIRECTORY}; without one the bundle is compiled without a cache.
 *
 * Dynamic `import()` inside a `vm.Script` needs an experimental flag on Node.js 20, so the bundle
 * step rewrites each `import(` call of the bundle into `__fleetImport(`, a parameter of the
 * function the bundle runs in: the importer the ES module that loads the bundle passes in, whose
 * `import()` resolves as its own would (scripts/bundle.mjs).
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** Where the CLI's entry leaves the cache directory it checked (a string), for this process only. */
export const CODE_CACHE_DIRECTORY = Symbol.for('fleet.codeCacheDirectory');

/** What replaces `import()` inside the bundle. */
export type DynamicImport = (specifier: string) => Promise<unknown>;

/** The parameter that stands in for `import(` inside the bundle (the bundle step renames to it). */
export const IMPORT_PARAMETER = '__fleetImport';

/**
 * The script a bundle's text runs as: a function of Node's five CommonJS parameters, then the
 * importer. The bundle step compiles it too, to check the text it wrote.
 */
export function wrapBundle(source: string): string {
  return `(function (exports, require, module, __filename, __dirname, ${IMPORT_PARAMETER}) { ${source}\n})`;
}

/** Larger than any cache of fleet's bundles; a bigger file is not read. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

export type CacheUse = 'none' | 'hit' | 'rejected' | 'miss';

export interface LoadOptions {
  /** The checked cache directory, or undefined to compile without a cache. */
  readonly cacheDirectory?: string | undefined;
  /** Runs when the process exits, to write the cache; `process.once('exit', …)` by default. */
  readonly onExit?: (write: () => void) => void;
}

export interface Loaded {
  readonly exports: unknown;
  readonly cache: CacheUse;
  /** The cache file read or to be written (undefined without a directory). */
  readonly cacheFile?: string;
}

/** The cache directory the CLI's entry handed over, if any. */
export function handedCacheDirectory(): string | undefined {
  const value = (globalThis as Record<symbol, unknown>)[CODE_CACHE_DIRECTORY];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * The cache file of one source text on this Node.js: the bundle's name, the Node.js version and
 * architecture, then a hash of the text. Two Node.js lines sharing a home keep one file each; a
 * new text replaces only its own line's file (see {@link writeCache}).
 */
export function cacheFileName(bundle: string, source: string | Uint8Array): string {
  const text = createHash('sha256').update(source).digest('hex').slice(0, 24);
  return `${cachePrefix(bundle)}${text}.v8cache`;
}

function cachePrefix(bundle: string): string {
  return `${path.basename(bundle)}-${process.version}-${process.arch}-`;
}

/**
 * The cached data in `file`, or undefined when there is none to trust: absent, a symbolic link
 * (opened with `O_NOFOLLOW`), not a regular file, someone else's, or implausibly large.
 */
function readCache(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stats.isFile() || stats.size > MAX_CACHE_BYTES) return undefined;
    if (uid !== undefined && stats.uid !== uid) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the cache, created exclusively (0600) and renamed into place, and removes the caches of
 * this bundle's other texts on this Node.js. Never throws: a cache that cannot be written costs
 * the next run speed, not correctness.
 */
function writeCache(directory: string, bundle: string, file: string, data: Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, data, { flag: 'wx', mode: 0o600 });
    renameSync(temporary, file);
    const prefix = cachePrefix(bundle);
    for (const name of readdirSync(directory)) {
      if (name.startsWith(prefix) && name.endsWith('.v8cache') && name !== path.basename(file)) {
        rmSync(path.join(directory, name), { force: true });
      }
    }
  } catch {
    rmSync(temporary, { force: true });
  }
}

/**
 * Loads the CommonJS bundle at `bundle` (an absolute path) as Node would — a module in
 * `require.cache`, its `require` resolving from its own directory — but compiled through a
 * `vm.Script` with the cached data of an earlier run, and with `importer` in place of `import()`.
 * The cache is written when the process exits, so it holds every function the run compiled.
 */
export function loadCodeCached(
  bundle: string,
  importer: DynamicImport,
  options: LoadOptions = {},
): Loaded {
  // The text hashed as read (a string would be encoded to UTF-8 again for the hash: the same
  // digest, 2 ms later), and an ASCII file — fleet's bundles are — taken as one-byte text without
  // decoding UTF-8 (2 ms of each ~500 KB file on every call).
  const bytes = readFileSync(bundle);
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  const directory = options.cacheDirectory;
  const cacheFile =
    directory === undefined ? undefined : path.join(directory, cacheFileName(bundle, bytes));
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new vm.Script(wrapBundle(source), {
    filename: bundle,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const cache: CacheUse =
    cacheFile === undefined
      ? 'none'
      : cachedData === undefined
        ? 'miss'
        : script.cachedDataRejected === true
          ? 'rejected'
          : 'hit';
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const module = new Module(bundle);
  module.filename = bundle;
  const require = createRequire(bundle);
  require.cache[bundle] = module;
  try {
    wrapper.call(
      module.exports,
      module.exports,
      require,
      module,
      bundle,
      path.dirname(bundle),
      importer,
    );
  } catch (error) {
    delete require.cache[bundle];
    throw error;
  }
  module.loaded = true;
  if (directory !== undefined && cacheFile !== undefined && cache !== 'hit') {
    const onExit = options.onExit ?? ((write: () => void) => process.once('exit', write));
    onExit(() => writeCache(directory, bundle, cacheFile, script.createCachedData()));
  }
  return { exports: module.exports, cache, ...(cacheFile === undefined ? {} : { cacheFile }) };
}
