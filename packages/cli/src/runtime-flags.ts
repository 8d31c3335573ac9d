/** Flags the runtime verbs share (upgrade, bootstrap apply, bootstrap rollback). */
import { Flags } from '@fleet/core/command';

/** `--acceptance-timeout SECONDS`, within the node's bounds (core's ACCEPTANCE_TIMEOUT_MS). */
export function acceptanceTimeoutFlag(runtime: 'new' | 'prior') {
  return Flags.integer({
    description: `seconds the ${runtime} runtime has to be accepted`,
    default: 60,
    min: 1,
    max: 600,
  });
}
