/**
 * Where the node keeps its own state (contract §5): everything under `~/.local/state/fleet/`, where
 * `~` is the controller's `--home`. Directories are 0700, files 0600.
 */
import { randomBytes } from 'node:crypto';
import { basename, join, relative, sep } from 'node:path';

export const STATE_DIR = '.local/state/fleet';

/** The prefix of every temporary file the controller creates; swept at the next start. */
export const TEMP_PREFIX = '.fleet-tmp-';

/** `${TEMP_PREFIX}state-<file>-p<pid>-<12 hex>` ({@link stateTempName}). */
const STATE_TEMP = /^\.fleet-tmp-state-.+-p(\d+)-[0-9a-f]{12}$/;

/**
 * A temp file's name for replacing the state file `target`: it names the writing process, because
 * the state directory has writers besides the controller (`fleet token issue --home` runs beside
 * it), and a controller starting up must not sweep the temp file of a writer still at work.
 */
export function stateTempName(target: string): string {
  return `${TEMP_PREFIX}state-${basename(target)}-p${process.pid}-${randomBytes(6).toString('hex')}`;
}

/** The pid a {@link stateTempName} names (`null`: another kind of temp file). */
export function stateTempWriter(name: string): number | null {
  const match = STATE_TEMP.exec(name);
  return match ? Number(match[1]) : null;
}

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
  /** What fleet's writer put at each managed path (sha256 per content, `written.ts`). */
  readonly written: string;
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
    written: join(root, 'written.json'),
  };
}

/** The `~/` form of an absolute path under `home` (what crosses the wire and the audit log). */
export function homeRelative(home: string, absolute: string): string {
  return `~/${relative(home, absolute).split(sep).join('/')}`;
}
