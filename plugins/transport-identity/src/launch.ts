/**
 * Running the switch from outside the controller. The controller that answers an install of a new
 * node id is the process its supervisor replaces, so the switch (`switchNodeId`) runs in a small
 * detached helper process (its own session: stopping the controller does not stop it), started
 * once the install's answer is sent. Its log is `~/.local/state/fleet/logs/transport-identity.log`.
 *
 * The helper only drives the supervisor. Whether the switch held is settled by the controller that
 * comes up: the one with the new id completes the journaled operation; the one with the old id
 * (the helper's rollback restart) restores the identity file from its backup at start, before it
 * checks that file, and reports the operation rolled back.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SupervisorLocator, SwitchPlan } from './supervisor.js';

export interface HelperInput extends SwitchPlan {
  readonly operationId: string;
  readonly locator: SupervisorLocator;
}

export const HELPER_LOG = '.local/state/fleet/logs/transport-identity.log';

/** Starts the detached helper for `input` and returns at once. */
export function launchSwitchHelper(home: string, input: HelperInput): void {
  const script = fileURLToPath(new URL('./switch-helper.js', import.meta.url));
  const log = join(home, ...HELPER_LOG.split('/'));
  mkdirSync(join(log, '..'), { recursive: true, mode: 0o700 });
  const fd = openSync(log, 'a', 0o600);
  try {
    const child = spawn(process.execPath, [script, JSON.stringify(input)], {
      cwd: home,
      detached: true,
      stdio: ['ignore', fd, fd],
      // Nothing inherited: no tokens, no secrets; the socket path is in the argument.
      env: { PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin', HOME: home },
    });
    child.unref();
  } finally {
    closeSync(fd);
  }
}
