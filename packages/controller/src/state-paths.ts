/**
 * Where the node keeps its own state (contract §5): everything under `~/.local/state/fleet/`, where
 * `~` is the controller's `--home`. Directories are 0700, files 0600.
 */
import { join, relative, sep } from 'node:path';

export const STATE_DIR = '.local/state/fleet';

/** The prefix of every temporary file the controller creates; swept at the next start. */
export const TEMP_PREFIX = '.fleet-tmp-';

export interface StatePaths {
  readonly home: string;
  readonly root: string;
  readonly tokens: string;
  readonly tokensLock: string;
  readonly audit: string;
  readonly backups: string;
  readonly journal: string;
  readonly operations: string;
  readonly pidFile: string;
  /** The values the node resolved and may still hold on disk (secret-memory.ts). */
  readonly secretMemory: string;
}

export function statePaths(home: string): StatePaths {
  const root = join(home, ...STATE_DIR.split('/'));
  return {
    home,
    root,
    tokens: join(root, 'tokens.json'),
    tokensLock: join(root, 'tokens.lock'),
    audit: join(root, 'audit.jsonl'),
    backups: join(root, 'backups'),
    journal: join(root, 'journal'),
    operations: join(root, 'operations'),
    pidFile: join(root, 'controller.pid'),
    secretMemory: join(root, 'secret-memory.json'),
  };
}

/** The `~/` form of an absolute path under `home` (what crosses the wire and the audit log). */
export function homeRelative(home: string, absolute: string): string {
  return `~/${relative(home, absolute).split(sep).join('/')}`;
}
