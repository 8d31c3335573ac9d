/**
 * `fleet host add`'s service: enrolls a machine as a host over SSH, one command per machine
 * (host/add.ts; contract §12). The registry comes from the container the CLI builds
 * (docs/architecture.md "Services").
 */
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { addHost, type AddHostOptions, type AddHostResult } from '../host/add.js';

export type { AddHostResult } from '../host/add.js';

/** What `fleet host add` asks for: every option but the registry, which is the service's. */
export type HostAddOptions = Omit<AddHostOptions, 'registry'>;

@injectable()
export class HostAddService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  async run(options: HostAddOptions): Promise<AddHostResult> {
    return addHost({ ...options, registry: await this.plugins.registry() });
  }
}
