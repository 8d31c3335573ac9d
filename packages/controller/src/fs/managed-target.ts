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
 *
 * A parent directory may be such a link too (`~/.config -> dotfiles/config` with `symlinkInto:
 * [~/dotfiles]`): the file is then managed at the same place under the link's target
 * (`~/dotfiles/config/…`), with the same refusals — outside the home, fleet's own state, outside
 * every listed directory, a chain (a link under the linked directory, or reached through another).
 * The directory link itself is never touched.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FleetError, fleetOwnReason, isFleetOwnPath, isHomePath } from '@fleet/core/node';
import { errnoOf } from './errors.js';
import { isInside, targetOf, type Target } from './home-target.js';
import { walkParents } from './parent-walk.js';

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
 * (the node policy's `symlinkInto`, `~/` paths) admit its target — the target; or, when one of
 * its parent directories is such a link (`~/.config -> dotfiles/config`, the layout of a dotfiles
 * checkout), the same path under the link's target (`~/dotfiles/config/…`). One link per path: a
 * link reached through another, or a linked file under a linked directory, is a chain — refused.
 */
export async function managedTarget(
  home: string,
  path: string,
  linkDirs: readonly string[],
): Promise<ManagedTarget> {
  const target = targetOf(home, path);
  if (linkDirs.length === 0) return target;
  const parent = linkedParent(home, target);
  if (parent !== null) {
    const linked = checkedLink(home, path, parent.absolute, linkDirs, 'directory');
    const moved = `${linked}/${target.components.slice(parent.depth).join('/')}`;
    if (isFleetOwnPath(moved)) {
      throw new FleetError('PATH_OUTSIDE_ROOT', `${path} links into ${fleetOwnReason(moved)}`);
    }
    const located = targetOf(home, moved);
    const final = lstatSync(located.absolute, { throwIfNoEntry: false });
    if (final?.isSymbolicLink() === true) {
      throw new FleetError(
        'SYMLINK_REFUSED',
        `${path} is a symbolic link under a linked directory (${linked}): a chain of links; refused`,
      );
    }
    return { ...located, via: path };
  }
  let stats;
  try {
    stats = lstatSync(target.absolute);
  } catch {
    return target; // absent, or a parent is not a directory: the usual checks say which
  }
  if (!stats.isSymbolicLink()) return target;
  // The link's own parents must be real directories, as for any managed path.
  await walkParents(home, target, { create: false });
  return {
    ...targetOf(home, checkedLink(home, path, target.absolute, linkDirs, 'file')),
    via: path,
  };
}

/**
 * The first parent directory of `target` (below the home) that is a symbolic link, with how many
 * components it spans; `null` when every parent that exists is a real directory.
 */
function linkedParent(home: string, target: Target): { absolute: string; depth: number } | null {
  let current = home;
  for (let index = 0; index < target.components.length - 1; index += 1) {
    current = join(current, target.components[index] as string);
    const stats = lstatSync(current, { throwIfNoEntry: false });
    if (stats === undefined || stats.isSymbolicLink() === false) {
      if (stats === undefined || !stats.isDirectory()) return null;
      continue;
    }
    return { absolute: current, depth: index + 1 };
  }
  return null;
}

/**
 * The `~/` path a link at `absolute` (a managed file, or a parent directory of one) points to,
 * when the node may manage through it: inside the home, not fleet's own state, inside a
 * `symlinkInto` directory, and resolved by the kernel to exactly what its text names (no other
 * link on the way, no `..` through one). Else refused, naming `path`.
 */
function checkedLink(
  home: string,
  path: string,
  absolute: string,
  linkDirs: readonly string[],
  kind: 'file' | 'directory',
): string {
  const resolved = resolve(dirname(absolute), readlinkSync(absolute));
  if (!isInside(home, resolved) || resolved === home) {
    throw new FleetError(
      'PATH_OUTSIDE_ROOT',
      `${path} is ${kind === 'file' ? 'a symbolic link' : 'under a symbolic link'} that resolves outside the node home; refused`,
    );
  }
  const linked = `~/${relative(home, resolved).split(sep).join('/')}`;
  if (!isHomePath(linked)) {
    throw new FleetError('SYMLINK_REFUSED', `${path} links to a path fleet cannot manage; refused`);
  }
  if (isFleetOwnPath(linked)) {
    throw new FleetError('PATH_OUTSIDE_ROOT', `${path} links into ${fleetOwnReason(linked)}`);
  }
  const inside = (dir: string) =>
    linked.startsWith(`${dir}/`) || (kind === 'directory' && linked === dir);
  if (!linkDirs.some(inside)) {
    throw new FleetError(
      'SYMLINK_REFUSED',
      `${path} ${kind === 'file' ? 'is a symbolic link' : 'is under a symbolic link'} to ${linked}, outside the directories the node policy lets a managed file link into (symlinkInto: ${linkDirs.join(', ')}); refused`,
    );
  }
  // The kernel must resolve the link to exactly the path its text names (no symlinked
  // component, no `..` through one): otherwise what fleet writes is not what the link shows.
  const real =
    realOrNull(absolute) ??
    (kind === 'directory'
      ? null
      : (() => {
          const parent = realOrNull(dirname(resolved));
          return parent === null
            ? null
            : resolve(parent, resolved.slice(dirname(resolved).length + 1));
        })());
  if (real !== resolved) {
    throw new FleetError(
      'SYMLINK_REFUSED',
      real === null && kind === 'directory'
        ? `${path} is under a symbolic link to ${linked}, which does not exist; refused`
        : `${path} links to ${linked} through another symbolic link; refused`,
    );
  }
  return linked;
}
