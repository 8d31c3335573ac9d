/**
 * `fleet lab up` (contract §13): node homes, tokens issued into each node's store, one detached
 * supervisor per node (or one virtual process for all), the fleet repository with every node's
 * real controller URL, and — only once every controller answered `/v1/identity` with its node id
 * through the operator's own client — `lab.json`. If anything fails after a process started,
 * every process started is stopped again: a failed `lab up` leaves nothing running.
 *
 * A DIR holding a stopped lab is brought up again as it was: same hosts, ports, tokens and repo.
 *
 * `--supervisor systemd-user` runs each controller as a real unit of the calling user's
 * `systemd --user` manager instead (systemd.ts); every node records which supervisor runs it
 * (`supervisor.json`), so its coupled restarts and `lab down` drive the right one.
 *
 * Its options are in up-options.ts. The steps, in order: the plan, checked before anything is
 * written (up-plan.ts); tokens, signing key and node policies (up-nodes.ts); the controllers
 * started (up-supervised.ts, up-units.ts); the repository, the identity check and lab.json
 * (up-finish.ts).
 */
import type { LabDocument } from '@fleet/core';
import type { LabUpOptions } from './up-options.js';
import { prepareLabNodes } from './up-nodes.js';
import { planLabUp } from './up-plan.js';
import { labUpSupervised } from './up-supervised.js';
import { labUpUnits } from './up-units.js';

export type { LabSupervisorKind, LabUpOptions } from './up-options.js';

export async function labUp(options: LabUpOptions): Promise<LabDocument> {
  const plan = await planLabUp(options);
  const keys = await prepareLabNodes(plan, options.progress ?? (() => undefined));
  return plan.supervisor === 'systemd-user'
    ? labUpUnits(options, plan, keys)
    : labUpSupervised(options, plan, keys);
}
