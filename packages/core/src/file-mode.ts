/**
 * A managed file's permission bits as the repository declares them (contract §10.4: a files
 * entry's `mode`), pure. One rule everywhere — the manifest, the install request, the writer:
 * three or four octal digits (`"600"`, `"0600"`), written canonically with four; no setuid, setgid
 * or sticky bit (a write credential must never install a set-id program: the writer refuses to
 * replace set-id files for the same reason); never writable by group or others (a file others may
 * rewrite is no longer the repository's, and drift could not tell their change from fleet's); and
 * readable by its owner (the install reads every file back to verify it).
 *
 * On Windows a mode means nothing (NTFS has no permission bits): a node there ignores it and
 * reports none, so drift compares no mode (contract §10.4).
 */
import { FleetError } from './errors.js';

/** The owner may read: the install's read-back needs it. */
const OWNER_READ = 0o400;
/** Group or others may write. */
const SHARED_WRITE = 0o022;

/** Why `text` is not a mode fleet writes, or `null` when it is one. */
export function fileModeProblem(text: string): string | null {
  if (!/^[0-7]{3,4}$/.test(text)) {
    return 'must be 3 or 4 octal digits, quoted (mode: "0600")';
  }
  const bits = Number.parseInt(text, 8);
  if (bits > 0o777) return 'must not set setuid, setgid or sticky (the first of 4 digits is 0)';
  if ((bits & SHARED_WRITE) !== 0) {
    return 'must not be writable by group or others (at most 0755, e.g. "0644" or "0600")';
  }
  if ((bits & OWNER_READ) === 0) return 'must be readable by its owner (fleet reads it back)';
  return null;
}

/** The permission bits of a valid mode text (`"0600"` → `0o600`); else `BAD_REQUEST`. */
export function parseFileMode(text: string): number {
  const problem = fileModeProblem(text);
  if (problem !== null) {
    throw new FleetError('BAD_REQUEST', `mode ${JSON.stringify(text)} ${problem}`);
  }
  return Number.parseInt(text, 8);
}

/** Permission bits in the canonical form (`0o600` → `"0600"`, a sticky `0o1644` → `"1644"`). */
export function formatFileMode(bits: number): string {
  return (bits & 0o7777).toString(8).padStart(4, '0');
}
