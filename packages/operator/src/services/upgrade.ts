/**
 * `fleet upgrade`'s service: moves one host, or the fleet (a canary first, then the rest with a
 * bound), to fleet.yaml's canonical runtime through a plan-bound generation, and resumes an
 * interrupted one (runtime/upgrade.ts; contract §11, §12). Needs no plugin: nothing is injected.
 */
import { injectable } from '@fleet/core/di';
import {
  upgradeFleet,
  upgradeHost,
  type FleetUpgradeDocument,
  type HostUpgraded,
  type UpgradeFleetInput,
  type UpgradeHostInput,
} from '../runtime/upgrade.js';

export {
  currentNote,
  renderFleetUpgradeHost,
  renderFleetUpgradeSummary,
} from '../runtime/upgrade.js';
export type { FleetUpgradeDocument, HostUpgraded } from '../runtime/upgrade.js';

@injectable()
export class UpgradeService {
  /** One host (`fleet upgrade HOST`, `--resume`). */
  host(options: UpgradeHostInput): Promise<HostUpgraded> {
    return upgradeHost(options);
  }

  /** Several hosts or all (`--host H…`, `--all`): the canary first, stop at the first failure. */
  fleet(options: UpgradeFleetInput): Promise<FleetUpgradeDocument> {
    return upgradeFleet(options);
  }
}
