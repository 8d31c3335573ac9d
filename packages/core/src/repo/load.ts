/**
 * Loads the fleet repository's declarative files (`fleet.yaml`, `hosts/*.yaml`) into a validated
 * {@link FleetRepo}. Every problem is collected, each naming its file, field path and line, and
 * reported together in one error (exit 2).
 */
import { readFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { closestName } from '../closest.js';
import { FleetError, type Problem } from '../errors.js';
import { parseRepoPath } from '../paths.js';
import { parseYaml, type ParsedYaml } from '../yaml.js';
import { zodProblems } from '../zod-problems.js';
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

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Loads and validates the repository at `root`. Throws `REPO_INVALID` listing every problem. */
export async function loadRepo(root: string): Promise<FleetRepo> {
  const manifestText = await readOptional(join(root, MANIFEST_FILE));
  if (manifestText === undefined) {
    throw new FleetError('REPO_NOT_FOUND', `no ${MANIFEST_FILE} in ${root}`);
  }
  const problems: Problem[] = [];
  let manifest: FleetManifest | undefined;
  let manifestLine: ParsedYaml['lineOf'] = () => undefined;
  try {
    ({ manifest, lineOf: manifestLine } = parseManifestWithLines(manifestText, MANIFEST_FILE));
  } catch (error) {
    problems.push(...problemsOf(error));
  }

  const variables = new Map<string, HostVariables>();
  let entries: string[] = [];
  try {
    entries = (await readdir(join(root, HOSTS_DIR))).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // Host files are read concurrently (the fs thread pool bounds it), then checked in name order
  // so problems come out in a stable order.
  const hostFiles = entries.filter((entry) => !entry.startsWith('.'));
  const texts = await Promise.all(
    hostFiles.map((entry) =>
      entry.endsWith('.yaml')
        ? readFile(join(root, HOSTS_DIR, entry), 'utf8')
        : Promise.resolve(''),
    ),
  );
  hostFiles.forEach((entry, index) => {
    const file = `${HOSTS_DIR}/${entry}`;
    if (!entry.endsWith('.yaml')) {
      problems.push({ file, message: 'host files are named <host>.yaml' });
      return;
    }
    const host = entry.slice(0, -'.yaml'.length);
    if (manifest && !Object.hasOwn(manifest.hosts, host)) {
      problems.push({
        file,
        message: `host ${host} is not declared under hosts: in ${MANIFEST_FILE}`,
      });
    }
    try {
      variables.set(host, parseHostVariables(texts[index] as string, file));
    } catch (error) {
      problems.push(...problemsOf(error));
    }
  });

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
  return { root, manifest, variables, manifestLine };
}

/** One host's entry; `UNKNOWN_HOST` (exit 2) naming the declared hosts otherwise. */
export function hostEntry(repo: FleetRepo, host: string): HostEntry {
  if (!Object.hasOwn(repo.manifest.hosts, host)) {
    const known = Object.keys(repo.manifest.hosts).sort();
    const guess = closestName(host, known);
    throw new FleetError(
      'UNKNOWN_HOST',
      `unknown host ${JSON.stringify(host)}${guess === undefined ? '' : ` — did you mean ${guess}?`} (fleet.yaml declares: ${known.join(', ') || 'none'})`,
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
