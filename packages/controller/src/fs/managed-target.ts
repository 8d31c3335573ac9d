/**
 * Where a managed path's bytes live (docs/node-policy.md, "Symbolic links"). A managed file is a
 * regular file at its path — or, when the node policy lists directories in `symlinkInto`, it may
 * be a symbolic link whose target is a regular file inside one of them (`~/.zshrc ->
 * ~/dotfiles/zshrc` with `symlinkInto: [~/dotfiles]`). Then every read and write goes to the
 * link's target: install replaces the target atomically in the target's own directory (temp file,
 * fsync, rename, directory fsync) with its backup and receipt as for any file, and the link itself
 * is never touched — so the dotfiles checkout sees the change and the link keeps working.
 *
 * Refused, before anything is read: a link whose target is outside the home (`PATH_OUTSIDE_ROOT`),
 * in fleet's own state (`PATH_OUTSIDE_ROOT`), outside every listed directory (`SYMLINK_REFUSED`),
 * reached through another symbolic link or `..` the kernel resolves differently from its text
 * (`SYMLINK_REFUSED`); the target itself is read with the usual checks (no symlinked component,
 * not a link again). Without `symlinkInto`, a symlinked managed file is refused as it always was.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { FleetError, fleetOwnReason, isFleetOwnPath, isHomePath } from '@fleet/core/node';
import { errnoOf } from './errors.js';
import { isInside, targetOf, walkParents, type Target } from './safe-path.js';

/** A managed path located: where its bytes are, and the link it was reached through, if any. */
export interface ManagedTarget extends Target {
  /** The `~/` path of the symbolic link (the managed path) when the bytes live at its target. */
  readonly via?: string;
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Locates `path` under `home`: the path itself, or — when it is a symbolic link and `linkDirs`
 * (the node policy's `symlinkInto`, `~/` paths) admit its target — the target.
 */
export async function managedTarget(
  home: string,
  path: string,
  linkDirs: readonly string[],
): Promise<ManagedTarget> {
  const target = targetOf(home, path);
  if (linkDirs.length === 0) return target;
  let stats;
  try {
    stats = lstatSync(target.absolute);
  } catch {
    return target; // absent, or a parent is not a directory: the usual checks say which
  }
  if (!stats.isSymbolicLink()) return target;
  // The link's own parents must be real directories, as for any managed path.
  await walkParents(home, target, { create: false });
  const text = readlinkSync(target.absolute);
  const resolved = resolve(target.parent, text);
  if (!isInside(home, resolved) || resolved === home) {
    throw new FleetError(
      'PATH_OUTSIDE_ROOT',
      `${path} is a symbolic link that resolves outside the node home; refused`,
    );
  }
  const linked = `~/${relative(home, resolved).split(sep).join('/')}`;
  if (!isHomePath(linked)) {
    throw new FleetError('SYMLINK_REFUSED', `${path} links to a path fleet cannot manage; refused`);
  }
  if (isFleetOwnPath(linked)) {
    throw new FleetError('PATH_OUTSIDE_ROOT', `${path} links into ${fleetOwnReason(linked)}`);
  }
  if (!linkDirs.some((dir) => linked.startsWith(`${dir}/`))) {
    throw new FleetError(
      'SYMLINK_REFUSED',
      `${path} is a symbolic link to ${linked}, outside the directories the node policy lets a managed file link into (symlinkInto: ${linkDirs.join(', ')}); refused`,
    );
  }
  // The kernel must resolve the link to exactly the path its text names (no symlinked
  // component, no `..` through one): otherwise what fleet writes is not what the link shows.
  const real =
    realOrNull(target.absolute) ??
    (() => {
      const parent = realOrNull(dirname(resolved));
      return parent === null ? null : resolve(parent, resolved.slice(dirname(resolved).length + 1));
    })();
  if (real !== resolved) {
    throw new FleetError(
      'SYMLINK_REFUSED',
      `${path} links to ${linked} through another symbolic link; refused`,
    );
  }
  return { ...targetOf(home, linked), via: path };
}
