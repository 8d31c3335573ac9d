/**
 * In-code failpoints for crash and fault tests (reliability catalogue §1, "In-code failpoints").
 * Inactive unless `FLEET_FAILPOINT` is set, e.g.
 *
 *   FLEET_FAILPOINT=install.after_backup:kill
 *   FLEET_FAILPOINT=install.before_rename:sleep(2000),audit.before_append:throw
 *
 * Actions: `kill` (SIGKILL to the controller itself, as `kill -9` would), `throw` (an `IO_ERROR`
 * raised at that point), `sleep(<ms>)` (widens a race window).
 *
 * Points, in the order an install meets them:
 * - `install.before_backup`     live sha checked, nothing written yet
 * - `install.after_backup`      the backup is durable, the target untouched
 * - `install.after_temp_write`  the temp file is written and fsync'd beside the target
 * - `install.before_rename`     token re-checked, the live file checked a last time and linked
 *                               aside (catalogue 31); the rename follows
 * - `install.after_rename`      the target holds the new content (directory fsync'd)
 * - `install.during_action`     a coupled action is about to run a process
 * - `audit.before_append`       an audit record is about to be appended
 * - `controller.start`          recovery and the identity check are done; the controller is
 *                               about to listen (a start that fails here never serves)
 *
 * A point may be scoped to one node id, `<point>@<node-id>:<action>`: it then fires only in a
 * controller running with that `--node-id` (e.g. `controller.start@node-02-new:throw` makes the
 * restart of a node-id change fail while every other start succeeds).
 *
 * Runtime generations (contract §12, catalogue 46, 50, 53), `packages/controller/src/generations/`:
 * - `runtime.stage.before_rename`  the generation is complete, fsync'd and 0444/0555 in its temp
 *                                  directory; the rename into `generations/<build-id>` follows
 * - `runtime.flip.before_rename`   the temp symlink (or pointer file) exists; the rename over
 *                                  `current` follows
 * - `runtime.journal.<step>`       the journal record of `<step>` is durable (file and directory
 *                                  fsync'd); nothing of the next step has happened. Steps: begin,
 *                                  staged, activated, supervisor-restarted, accepted, failed,
 *                                  rolled-back, manual-recovery-required, end
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FleetError } from '@fleet/core/node';

export const FAILPOINTS = [
  'install.before_backup',
  'install.after_backup',
  'install.after_temp_write',
  'install.before_rename',
  'install.after_rename',
  'install.during_action',
  'audit.before_append',
  'controller.start',
  'runtime.stage.before_rename',
  'runtime.flip.before_rename',
  'runtime.journal.begin',
  'runtime.journal.staged',
  'runtime.journal.activated',
  'runtime.journal.supervisor-restarted',
  'runtime.journal.accepted',
  'runtime.journal.failed',
  'runtime.journal.rolled-back',
  'runtime.journal.manual-recovery-required',
  'runtime.journal.end',
] as const;
export type FailpointName = (typeof FAILPOINTS)[number];

export const FAILPOINT_ENV = 'FLEET_FAILPOINT';

const waiting = new Map<FailpointName, (() => void)[]>();

/**
 * Resolves when the failpoint `name` next fires in this process, before its action runs: a test
 * with an in-process controller acts inside a `sleep` window exactly then, instead of guessing
 * when the window opened.
 */
export function reached(name: FailpointName): Promise<void> {
  return new Promise((resolve) => {
    waiting.set(name, [...(waiting.get(name) ?? []), resolve]);
  });
}

/**
 * Triggers the failpoint `name` if `FLEET_FAILPOINT` names it (unscoped, or scoped to `nodeId`);
 * otherwise does nothing.
 */
export async function failpoint(name: FailpointName, nodeId?: string): Promise<void> {
  const spec = process.env[FAILPOINT_ENV];
  if (!spec) return;
  for (const entry of spec.split(',')) {
    const colon = entry.indexOf(':');
    if (colon < 0) continue;
    const [point, scope] = entry.slice(0, colon).trim().split('@');
    if (point !== name || (scope !== undefined && scope !== nodeId)) continue;
    const action = entry.slice(colon + 1).trim();
    for (const resolve of waiting.get(name) ?? []) resolve();
    waiting.delete(name);
    if (action === 'kill') {
      process.kill(process.pid, 'SIGKILL');
      await sleep(60_000); // never reached: SIGKILL cannot be caught
    } else if (action === 'throw') {
      throw new FleetError('IO_ERROR', `failpoint ${name} fired`);
    } else {
      const match = /^sleep\((\d+)\)$/.exec(action);
      if (match) await sleep(Number(match[1]));
    }
  }
}
