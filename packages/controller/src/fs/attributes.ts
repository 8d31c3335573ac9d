/**
 * A managed file's owner and permission bits, and what a replace keeps of them (catalogue 13): a
 * rename puts a new inode in place, so the writer (writer.ts, its temp file in temp-swap.ts) gives
 * it these explicitly.
 */
import { FleetError } from '@fleet/core/node';

/** Who owns a file and its permission bits: what a replace keeps (catalogue 13). */
export interface Attributes {
  /** Permission bits, sticky included (`& 0o1777`); setuid/setgid files are refused, never kept. */
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/** A new file's attributes: 0600, the controller's own uid and gid. */
export function ownAttributes(): Attributes {
  const { uid, gid } = processIdentity();
  return { mode: 0o600, uid, gid };
}

/** Who the controller runs as: what a new file gets, and which groups it may give a file. */
export interface ProcessIdentity {
  readonly uid: number;
  readonly gid: number;
  readonly groups: readonly number[];
}

export function processIdentity(): ProcessIdentity {
  return {
    uid: process.getuid?.() ?? -1,
    gid: process.getgid?.() ?? -1,
    groups: process.getgroups?.() ?? [],
  };
}

/**
 * What the new content of `live` keeps (catalogue 13), pure: its permission bits with the sticky
 * bit, and its owner. A rename puts a new inode in place, owned by the controller's user: as root
 * the controller gives it the old owner back; as any other user it can only keep its own uid and a
 * group it is in, so a file of another owner is refused — taking it over silently could lock that
 * owner out of its own configuration, and a receipt note after the fact would not undo that.
 * setuid/setgid files are refused as well: a write credential must not be a way to install set-id
 * programs, and dropping the bits would change what the file is without a word.
 */
export function keptAttributes(
  path: string,
  live: { readonly mode: number; readonly uid: number; readonly gid: number },
  own: ProcessIdentity = processIdentity(),
): Attributes {
  if (own.uid < 0) return { mode: live.mode & 0o777, uid: own.uid, gid: own.gid }; // Windows
  if ((live.mode & 0o6000) !== 0) {
    throw new FleetError(
      'FILE_ATTRIBUTES_REFUSED',
      `${path} is ${(live.mode & 0o4000) !== 0 ? 'setuid' : 'setgid'} (mode ${(live.mode & 0o7777).toString(8)}); fleet does not replace set-id files; nothing written`,
    );
  }
  if (own.uid !== 0 && live.uid !== own.uid) {
    throw new FleetError(
      'FILE_ATTRIBUTES_REFUSED',
      `${path} is owned by uid ${live.uid}, not by the controller's user (uid ${own.uid}); a replace would change its owner; nothing written`,
    );
  }
  if (own.uid !== 0 && live.gid !== own.gid && !own.groups.includes(live.gid)) {
    throw new FleetError(
      'FILE_ATTRIBUTES_REFUSED',
      `${path} belongs to group ${live.gid}, which the controller's user is not in; a replace would change its group; nothing written`,
    );
  }
  return { mode: live.mode & 0o1777, uid: live.uid, gid: live.gid };
}
