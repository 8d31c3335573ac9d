/**
 * The cgroups a harness user's `systemd --user` manager is delegated (systemd-user.ts, step 3):
 * which hierarchies systemd uses here, the user's `user.slice/user-<uid>.slice/user@<uid>.service`
 * made in each and handed to the user, and the slice removed again with the user. Apart because
 * the machine check (systemd-user-preconditions.ts), the launch (systemd-user-launch.ts) and the
 * removal (systemd-user-accounts.ts) all need the same layout.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The cgroup hierarchies systemd uses, as directories whose `user.slice/…` we create: the unified
 * (v2) one — `/sys/fs/cgroup` itself, or `/sys/fs/cgroup/unified` in the hybrid layout — and the
 * named v1 `systemd` hierarchy when mounted.
 */
export function cgroupLayout(): string[] {
  const roots: string[] = [];
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) roots.push('/sys/fs/cgroup');
  else {
    if (existsSync('/sys/fs/cgroup/unified/cgroup.procs')) roots.push('/sys/fs/cgroup/unified');
    if (existsSync('/sys/fs/cgroup/systemd/cgroup.procs')) roots.push('/sys/fs/cgroup/systemd');
  }
  return roots;
}

/** The user's `user@UID.service` cgroup in each hierarchy, owned by the user; their procs files. */
export function delegateCgroups(cgroups: readonly string[], uid: number, gid: number): string[] {
  const procs: string[] = [];
  for (const root of cgroups) {
    const dir = join(root, 'user.slice', `user-${uid}.slice`, `user@${uid}.service`);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw Object.assign(new Error(`cannot create ${dir}: ${(error as Error).message}`), {
        cgroupProblem: true,
      });
    }
    spawnSync('chown', ['-R', `${uid}:${gid}`, dir], { stdio: 'ignore' });
    procs.push(join(dir, 'cgroup.procs'));
  }
  return procs;
}

/** Removes the user's `user-<uid>.slice` (and `user.slice`, once empty) from each hierarchy. */
export function removeUserCgroups(cgroups: readonly string[], uid: number): void {
  for (const root of cgroups) {
    const slice = join(root, 'user.slice', `user-${uid}.slice`);
    // Depth first: a cgroup directory is removed with rmdir once it holds no processes.
    spawnSync('find', [slice, '-depth', '-type', 'd', '-exec', 'rmdir', '{}', ';'], {
      stdio: 'ignore',
    });
    try {
      rmdirSync(join(root, 'user.slice'));
    } catch {
      // another harness user's slice is still there, or it was never ours
    }
  }
}
