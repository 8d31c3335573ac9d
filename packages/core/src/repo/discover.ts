/**
 * Finds the fleet repository: `--repo`, then `$FLEET_REPO`, then the nearest directory at or above
 * the working directory that holds a fleet.yaml (as git finds `.git`).
 */
import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { FleetError } from '../errors.js';
import { MANIFEST_FILE } from './load.js';

export interface DiscoverOptions {
  readonly flag?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

async function hasManifest(dir: string): Promise<boolean> {
  try {
    return (await stat(join(dir, MANIFEST_FILE))).isFile();
  } catch {
    return false;
  }
}

export async function discoverRepo(options: DiscoverOptions): Promise<string> {
  const explicit: [string, string | undefined][] = [
    ['--repo', options.flag],
    ['FLEET_REPO', options.env?.['FLEET_REPO']],
  ];
  for (const [source, value] of explicit) {
    if (value === undefined || value === '') continue;
    const dir = resolve(options.cwd, value);
    if (await hasManifest(dir)) return dir;
    throw new FleetError('REPO_NOT_FOUND', `${source} ${dir} holds no ${MANIFEST_FILE}`, {
      suggestions: ['create one with: fleet init DIR'],
    });
  }
  const enclosing = await enclosingRepo(options.cwd);
  if (enclosing !== null) return enclosing;
  throw new FleetError(
    'REPO_NOT_FOUND',
    `no fleet repository: no ${MANIFEST_FILE} in ${resolve(options.cwd)} or above it, and neither --repo nor FLEET_REPO is set`,
    { suggestions: ['create one with: fleet init DIR', 'or point at one with --repo DIR'] },
  );
}

/** The nearest directory at or above `cwd` that holds a fleet.yaml, or `null`. */
export async function enclosingRepo(cwd: string): Promise<string | null> {
  let dir = resolve(cwd);
  for (;;) {
    if (await hasManifest(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The warning for a repository chosen by `--repo` or `$FLEET_REPO` while the working directory
 * lies inside another one — typically a `FLEET_REPO` left over from `eval "$(fleet lab up)"` —
 * or `null` when there is nothing to warn about. Paths are compared as given (the caller
 * resolves symlinks).
 */
export function otherRepoWarning(input: {
  readonly used: string;
  readonly enclosing: string | null;
  readonly flag?: string | undefined;
}): string | null {
  if (input.enclosing === null || input.enclosing === input.used) return null;
  const source = input.flag !== undefined && input.flag !== '' ? '--repo' : '$FLEET_REPO';
  const fix =
    source === '--repo'
      ? 'drop --repo to use the one you are in'
      : 'unset FLEET_REPO to use the one you are in';
  return `warning: using the fleet repository ${input.used} (from ${source}), not ${input.enclosing} that the working directory is in: ${fix}`;
}
