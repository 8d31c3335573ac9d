/**
 * The plugin's `fleet:status` hook (package.json `oclif.hooks`): the harness reconcile's
 * offline_pending hosts for `fleet status` (contract §7), read from the operator's state without
 * changing it — a damaged state file is only named (`peekState`).
 */
import type { StatusContribution, StatusHookOptions } from '@fleet/core/plugin';
import { peekState, reconcilePaths } from './reconcile/store.js';

const SOURCE = 'harness reconcile';

export default async function status(options: StatusHookOptions): Promise<StatusContribution> {
  const loaded = await peekState(reconcilePaths(options.env));
  if (loaded.problem !== undefined) {
    return { source: SOURCE, problem: `harness reconcile state: ${loaded.problem}` };
  }
  if (loaded.state === null) return null;
  return {
    source: SOURCE,
    lastRun: loaded.state.last_run,
    pending: loaded.state.offline_pending.map(({ host, first_seen, last_seen }) => ({
      host,
      first_seen,
      last_seen,
    })),
  };
}
