/**
 * Whether a process still runs, for the locks and temp files that name their writer by pid (the
 * token store's lock, the controller's pid file, a state file's temp, the runtime runner's
 * starter). `kill(pid, 0)` answers EPERM for a live process of another user; a zombie has ended
 * (its parent has not reaped it yet), so on Linux /proc's state letter is read too.
 */
import { readFileSync } from 'node:fs';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch (error) {
    // Gone since kill(0) looked; any other failure (/proc hidden from us): kill(0) said it lives.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
