/**
 * Loads the fleet repository's declarative files (`fleet.yaml`, `hosts/*.yaml`) into a validated
 * {@link FleetRepo}. Every problem is collected, each naming its file, field path and line, and
 * reported together in one error (exit 2).
 */
import { readFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { blobId, cacheDirOf, readCacheFile, writeCacheFile } from '../cache/store.js';
import { closestName } from '../closest.js';
import { FleetError, type Problem } from '../errors.js';
import { parseRepoPath } from '../paths.js';
import { parseYaml, type ParsedYaml } from '../yaml.js';
import { zodProblems } from '../zod-problems.js';
import { corePackageVersion } from '../package-version.js';
import {
  fleetManifestSchema,
  hostVariablesSchema,
  type FleetManifest,
  type HostEntry,
  type HostVariables,
} from './schema.js';

export const MANIFEST_FILE = 'fleet.yaml';
export const HOSTS_DIR = 'hosts';
export const DOMAINS_DIR = 'domains';

export interface FleetRepo {
  /** Absolute path of the repository's root (the directory holding fleet.yaml). */
  readonly root: string;
  readonly manifest: FleetManifest;
  /** `hosts/<host>.yaml` per host; a host without a file has no variables. */
  readonly variables: ReadonlyMap<string, HostVariables>;
  /** The line in fleet.yaml of a field path, for problems found after loading. */
  manifestLine(path: readonly PropertyKey[]): number | undefined;
}

/** Parses and validates `fleet.yaml` text. Throws `FLEET_YAML_INVALID` with every problem. */
export function parseManifest(text: string, file = MANIFEST_FILE): FleetManifest {
  return parseManifestWithLines(text, file).manifest;
}

function parseManifestWithLines(
  text: string,
  file: string,
): { manifest: FleetManifest; lineOf: ParsedYaml['lineOf'] } {
  const parsed = parseYaml(text, file, 'FLEET_YAML_INVALID');
  const result = fleetManifestSchema.safeParse(parsed.value);
  if (!result.success) {
    const problems = zodProblems(result.error, file, parsed.lineOf);
    throw new FleetError('FLEET_YAML_INVALID', `${file} is invalid`, { problems });
  }
  return { manifest: result.data, lineOf: parsed.lineOf };
}

/** Parses and validates one `hosts/<host>.yaml`. An empty file is an empty map. */
export function parseHostVariables(text: string, file: string): HostVariables {
  const parsed = parseYaml(text, file, 'HOST_FILE_INVALID');
  const value = parsed.value ?? {};
  const result = hostVariablesSchema.safeParse(value);
  if (!result.success) {
    const problems = zodProblems(result.error, file, parsed.lineOf);
    throw new FleetError('HOST_FILE_INVALID', `${file} is invalid`, { problems });
  }
  return result.data;
}

function problemsOf(error: unknown): Problem[] {
  if (error instanceof FleetError) {
    return error.problems.length > 0 ? [...error.problems] : [{ message: error.message }];
  }
  throw error;
}

async function readOptional(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The parsed repo cache (`.git/fleet-cache/repo-v1.json`, see `cache/store.ts`): the validated
 * value of each fleet.yaml and hosts/*.yaml text, keyed by its git blob id. Only valid files are
 * cached (an invalid one is parsed again, to report its problems with their lines), and a write
 * keeps exactly the entries of the load that wrote it. The format names core's version: a
 * cache written by another build, whose schemas may differ, is foreign.
 */
const REPO_CACHE_FILE = 'repo-v1.json';
const repoCacheBodySchema = z.lazy(() =>
  z.strictObject({
    manifests: z.record(z.string(), z.unknown()),
    hosts: z.record(z.string(), z.unknown()),
  }),
);
type RepoCacheBody = { manifests: Record<string, unknown>; hosts: Record<string, unknown> };

let repoCacheFormat: string | undefined;
function repoCacheFormatOf(): string {
  if (repoCacheFormat === undefined) {
    repoCacheFormat = `fleet.repo-cache/v1 @fleet/core@${corePackageVersion()}`;
  }
  return repoCacheFormat;
}

function readRepoCache(dir: string | null): RepoCacheBody {
  const empty = { manifests: {}, hosts: {} };
  if (dir === null) return empty;
  const parsed = repoCacheBodySchema.safeParse(
    readCacheFile(dir, REPO_CACHE_FILE, repoCacheFormatOf()),
  );
  return parsed.success ? parsed.data : empty;
}

/** The parsed repo cache of a repository, read once for one load. */
export interface RepoCache {
  readonly dir: string | null;
  readonly body: RepoCacheBody;
}

/** Reads the parsed repo cache of the repository at `root` (empty when there is none). */
export function openRepoCache(root: string): RepoCache {
  const dir = cacheDirOf(root);
  return { dir, body: readRepoCache(dir) };
}

/**
 * Whether the cache holds the validated variables of the host file whose git blob id is `blob`:
 * a load at a commit need not read such a file at all (`loadRepoAtHead`), its tree names the id.
 */
export function repoCacheHoldsHost(cache: RepoCache, blob: string): boolean {
  return Object.hasOwn(cache.body.hosts, blob);
}

/**
 * The validated variables of a host file's text when the parsed repo cache holds them (by blob
 * id), else `undefined`: a drift reads every version of hosts/*.yaml, and most are HEAD's.
 */
export function cachedHostVariablesOf(root: string): (text: string) => HostVariables | undefined {
  const { hosts } = readRepoCache(cacheDirOf(root));
  return (text) => {
    const blob = blobId(Buffer.from(text, 'utf8'));
    return Object.hasOwn(hosts, blob) ? (hosts[blob] as HostVariables) : undefined;
  };
}

/** Line lookups for a text that was not parsed with positions: parsed once, on first use. */
function linesOnDemand(text: string, file: string): ParsedYaml['lineOf'] {
  let lineOf: ParsedYaml['lineOf'] | undefined;
  return (path) => {
    lineOf ??= parseYaml(text, file, 'FLEET_YAML_INVALID').lineOf;
    return lineOf(path);
  };
}

/** Loads and validates the repository's working tree at `root`. Throws `REPO_INVALID` listing every problem. */
export async function loadRepo(root: string): Promise<FleetRepo> {
  const manifestBytes = await readOptional(join(root, MANIFEST_FILE));
  if (manifestBytes === undefined) {
    throw new FleetError('REPO_NOT_FOUND', `no ${MANIFEST_FILE} in ${root}`);
  }
  let entries: string[] = [];
  try {
    entries = (await readdir(join(root, HOSTS_DIR))).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // Host files are read synchronously, in name order (problems come out in a stable order): for
  // a thousand small files that is ten times faster than as many promises through the fs thread
  // pool (four round trips each), and nothing else runs while the repo loads.
  const hostFiles = entries.filter((entry) => !entry.startsWith('.'));
  return repoFromTexts(
    root,
    manifestBytes,
    hostFiles.map((entry) => ({
      entry,
      text: entry.endsWith('.yaml') ? readFileSync(join(root, HOSTS_DIR, entry)) : Buffer.alloc(0),
    })),
  );
}

/** A text as read from the working tree (bytes) or from git (a string). */
type RepoText = string | Uint8Array;
const bytesOf = (text: RepoText): Uint8Array =>
  typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
const stringOf = (text: RepoText): string =>
  typeof text === 'string' ? text : Buffer.from(text).toString('utf8');

/**
 * A `hosts/` entry (name order): its text, or, for a file read at a commit whose git blob id the
 * parsed repo cache holds ({@link repoCacheHoldsHost}), that id alone — the cache is keyed by
 * blob id, and the tree's id of a blob is the id of its content, so the text is never needed.
 */
export type HostFileSource =
  | { readonly entry: string; readonly text: RepoText }
  | { readonly entry: string; readonly blob: string };

/**
 * Validates a repository from the texts of its `fleet.yaml` and `hosts/` entries (name order),
 * wherever they were read: the working tree ({@link loadRepo}) or a commit (`loadRepoAtHead`).
 * Valid texts are taken from, and added to, the parsed repo cache by their blob ids.
 */
export function repoFromTexts(
  root: string,
  manifestSource: RepoText,
  hostFiles: readonly { readonly entry: string; readonly text: RepoText }[],
): FleetRepo {
  return repoFromSources(root, manifestSource, hostFiles, openRepoCache(root));
}

/**
 * {@link repoFromTexts} from host files given by text or, where the cache holds them, by blob id
 * alone (`loadRepoAtHead`); `cache` is the parsed repo cache as the caller read it.
 */
export function repoFromSources(
  root: string,
  manifestSource: RepoText,
  hostFiles: readonly HostFileSource[],
  cache: RepoCache,
): FleetRepo {
  const { dir: cacheDir, body: cached } = cache;
  const fresh: RepoCacheBody = { manifests: {}, hosts: {} };
  let missed = false;

  const problems: Problem[] = [];
  const manifestText = stringOf(manifestSource);
  const manifestBlob = blobId(bytesOf(manifestSource));
  let manifest: FleetManifest | undefined;
  let manifestLine: ParsedYaml['lineOf'] = () => undefined;
  if (Object.hasOwn(cached.manifests, manifestBlob)) {
    manifest = cached.manifests[manifestBlob] as FleetManifest;
    manifestLine = linesOnDemand(manifestText, MANIFEST_FILE);
  } else {
    missed = true;
    try {
      ({ manifest, lineOf: manifestLine } = parseManifestWithLines(manifestText, MANIFEST_FILE));
    } catch (error) {
      problems.push(...problemsOf(error));
    }
  }
  if (manifest !== undefined) fresh.manifests[manifestBlob] = manifest;

  const variables = new Map<string, HostVariables>();
  for (const source of hostFiles) {
    const { entry } = source;
    const file = `${HOSTS_DIR}/${entry}`;
    if (!entry.endsWith('.yaml')) {
      problems.push({ file, message: 'host files are named <host>.yaml' });
      continue;
    }
    const host = entry.slice(0, -'.yaml'.length);
    if (manifest && !Object.hasOwn(manifest.hosts, host)) {
      problems.push({
        file,
        message: `host ${host} is not declared under hosts: in ${MANIFEST_FILE}`,
      });
    }
    const blob = 'blob' in source ? source.blob : blobId(bytesOf(source.text));
    if (Object.hasOwn(cached.hosts, blob)) {
      variables.set(host, cached.hosts[blob] as HostVariables);
      fresh.hosts[blob] = cached.hosts[blob];
      continue;
    }
    if (!('text' in source)) {
      throw new FleetError('INTERNAL', `${file} was not read, and the cache does not hold it`);
    }
    missed = true;
    try {
      const parsed = parseHostVariables(stringOf(source.text), file);
      variables.set(host, parsed);
      fresh.hosts[blob] = parsed;
    } catch (error) {
      problems.push(...problemsOf(error));
    }
  }

  if (problems.length > 0 || manifest === undefined) {
    const first = problems.length === 1 ? `: ${problems[0]?.message ?? ''}` : '';
    throw new FleetError(
      problems.some((p) => p.file === MANIFEST_FILE) ? 'FLEET_YAML_INVALID' : 'REPO_INVALID',
      `the fleet repository at ${root} is invalid (${problems.length} problem${
        problems.length === 1 ? '' : 's'
      })${first}`,
      { problems },
    );
  }
  // Written only when something was parsed: a load that found everything cached writes nothing.
  if (missed && cacheDir !== null)
    writeCacheFile(cacheDir, REPO_CACHE_FILE, repoCacheFormatOf(), fresh);
  return { root, manifest, variables, manifestLine };
}

/** Declared hosts an unknown-host error names at most: a line, not a 1,000-host fleet's list. */
const UNKNOWN_HOST_NAMED = 10;

/** The declared hosts for an error line: all of them, or the first few and how many more. */
function declaredHosts(known: readonly string[]): string {
  if (known.length === 0) return 'none';
  if (known.length <= UNKNOWN_HOST_NAMED) return known.join(', ');
  return `${known.slice(0, UNKNOWN_HOST_NAMED).join(', ')}, … and ${known.length - UNKNOWN_HOST_NAMED} more`;
}

/** One host's entry; `UNKNOWN_HOST` (exit 2) naming the declared hosts otherwise. */
export function hostEntry(repo: FleetRepo, host: string): HostEntry {
  if (!Object.hasOwn(repo.manifest.hosts, host)) {
    const known = Object.keys(repo.manifest.hosts).sort();
    const guess = closestName(host, known);
    throw new FleetError(
      'UNKNOWN_HOST',
      // The guess is a hint of its own (printed once, under the message; `suggestions` in --json).
      `unknown host ${JSON.stringify(host)} (fleet.yaml declares: ${declaredHosts(known)})`,
      guess === undefined ? {} : { suggestions: [`did you mean ${guess}?`] },
    );
  }
  return repo.manifest.hosts[host] as HostEntry;
}

/** A host's variables (empty when it has no `hosts/<host>.yaml`). */
export function hostVariables(repo: FleetRepo, host: string): HostVariables {
  hostEntry(repo, host);
  return repo.variables.get(host) ?? {};
}

/**
 * A repo file's text from the working tree, for rendering; `CANONICAL_MISSING` naming the file
 * when it does not exist.
 */
export function readRepoFile(root: string, repoPath: string): string {
  try {
    return readFileSync(join(root, ...parseRepoPath(repoPath)), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new FleetError('CANONICAL_MISSING', `${repoPath} is missing`, {
        problems: [{ file: repoPath, message: 'canonical file is missing' }],
      });
    }
    throw error;
  }
}
