/**
 * A command run on the host over the enrollment's SSH session (contract §12.1), refused
 * (ACTION_FAILED, with the last line it printed) unless it exits 0.
 */
import * as core from '@fleet/core';
import type { SshSession } from './ssh-session.js';

/** What the steps on the host take from `fleet host add`'s options (add.ts). */
export interface SeatOptions {
  readonly root: string;
  readonly acceptanceTimeoutMs?: number;
  readonly progress: (line: string) => void;
}

export async function must(session: SshSession, command: string, stdin?: string): Promise<string> {
  const ran = await session.run(command, stdin === undefined ? {} : { stdin });
  if (ran.code !== 0) {
    throw new core.FleetError(
      'ACTION_FAILED',
      `on the host, ${command} failed (exit ${ran.code}): ${ran.stderr.trim().split('\n').pop() ?? ''}`,
    );
  }
  return ran.stdout;
}
