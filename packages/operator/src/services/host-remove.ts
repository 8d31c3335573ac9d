/**
 * `fleet host remove`'s service: takes a host out of the fleet over SSH — its controller stopped
 * and disabled, the operator's tokens revoked — then out of fleet.yaml, hosts/ and the
 * credentials file; its managed files stay (host/remove.ts; contract §12.1). The registry comes
 * from the container the CLI builds (docs/architecture.md "Services").
 */
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { removeHost, type RemoveHostOptions, type RemoveHostResult } from '../host/remove.js';

export type { RemoveHostResult } from '../host/remove.js';

/** What `fleet host remove` asks for: every option but the registry, which is the service's. */
export type HostRemoveOptions = Omit<RemoveHostOptions, 'registry'>;

@injectable()
export class HostRemoveService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  async run(options: HostRemoveOptions): Promise<RemoveHostResult> {
    return removeHost({ ...options, registry: await this.plugins.registry() });
  }
}
