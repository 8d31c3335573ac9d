/**
 * A node file's `~/` path located under the home (contract §5 allowlist; catalogue B): validated
 * with core's `parseHomePath` before any filesystem call, then split into the components the
 * parent walk (parent-walk.ts) goes down and the absolute path the file is opened at.
 */
import { dirname, join, sep } from 'node:path';
import { parseHomePath } from '@fleet/core/node';

/** A validated `~/` path and where it is on this node. */
export interface Target {
  readonly path: string;
  readonly components: readonly string[];
  readonly absolute: string;
  readonly parent: string;
  readonly name: string;
}

/** Validates `path` (`PATH_INVALID` before any filesystem call) and locates it under `home`. */
export function targetOf(home: string, path: string): Target {
  const components = parseHomePath(path);
  const absolute = join(home, ...components);
  return {
    path,
    components,
    absolute,
    parent: dirname(absolute),
    name: components[components.length - 1] as string,
  };
}

export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** `absolute`, a path under `home`, as the `~/` path errors name it. */
export function shown(home: string, absolute: string): string {
  return `~/${absolute
    .slice(home.length + 1)
    .split(sep)
    .join('/')}`;
}
