/**
 * The hard links of the writer's swap (temp-swap.ts `swapIn`, catalogue 31; docs/durability.md):
 * the replaced file's inode kept aside under a name fleet reserves, and what came of linking it.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { TEMP_PREFIX } from '../state-paths.js';
import { errnoOf } from './errors.js';
import type { Target } from './home-target.js';
import { link } from './seam.js';

const KEPT_LINK = new RegExp(`^${TEMP_PREFIX.replace(/\./g, '\\.')}[0-9A-HJKMNP-TV-Z]{26}-k\\d+$`);

/**
 * How many of an inode's names in `dir` are an install's kept link (`swapIn`): names fleet gave
 * it for the moment of a swap, not another file's.
 */
export function keptLinks(dir: string, ino: number): number {
  let count = 0;
  for (const name of readdirSync(dir)) {
    if (
      KEPT_LINK.test(name) &&
      lstatSync(join(dir, name), { throwIfNoEntry: false })?.ino === ino
    ) {
      count += 1;
    }
  }
  return count;
}

/** Filesystems (or settings) without hard links: the swap falls back to a plain rename. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS']);

/** `link(existing, created)`, and what came of it (`unsupported`: no hard links to be had). */
export async function hardLink(
  existing: string,
  created: string,
): Promise<'linked' | 'exists' | 'absent' | 'unsupported'> {
  try {
    await link(existing, created);
    return 'linked';
  } catch (error) {
    const errno = errnoOf(error) ?? '';
    if (errno === 'EEXIST') return 'exists';
    if (errno === 'ENOENT') return 'absent';
    if (NO_HARD_LINKS.has(errno)) return 'unsupported';
    throw error;
  }
}

/** The target of a name in `target`'s directory (read with the same checks as the target). */
export function beside(target: Target, absolute: string): Target {
  const name = basename(absolute);
  return {
    path: `${target.path.slice(0, -target.name.length)}${name}`,
    components: [...target.components.slice(0, -1), name],
    absolute,
    parent: target.parent,
    name,
  };
}
