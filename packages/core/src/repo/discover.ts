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
  let dir = resolve(options.cwd);
  for (;;) {
    if (await hasManifest(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new FleetError(
    'REPO_NOT_FOUND',
    `no fleet repository: no ${MANIFEST_FILE} in ${resolve(options.cwd)} or above it, and neither --repo nor FLEET_REPO is set`,
    { suggestions: ['create one with: fleet init DIR', 'or point at one with --repo DIR'] },
  );
}
