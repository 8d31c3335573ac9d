/**
 * `fleet apply`'s service: plans every host and, confirmed, installs exactly that plan fleet-wide
 * (config/apply-fleet.ts; contract §8). The registry comes from the container the CLI builds,
 * assembled only when the run needs it (docs/architecture.md "Services").
 */
import type { ApplyDocument } from '@fleet/core';
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { applyFleet, type ApplyFleetInput } from '../config/apply-fleet.js';

export { renderApplyHost, renderApplySummary } from '../config/apply-fleet.js';

/** What `fleet apply` asks for: every input but the registry's loader, which is the service's. */
export type ApplyOptions = Omit<ApplyFleetInput, 'loadRegistry'>;

@injectable()
export class ApplyService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  run(options: ApplyOptions): Promise<ApplyDocument> {
    return applyFleet({ ...options, loadRegistry: () => this.plugins.registry() });
  }
}
