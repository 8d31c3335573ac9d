/**
 * `fleet config adopt`'s service: takes a host's live file into the repository, committed
 * (config/adopt.ts; docs/classification.md). The registry comes from the container the CLI builds
 * (docs/architecture.md "Services").
 */
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { adoptLiveFile, type AdoptInput, type Adoption } from '../config/adopt.js';

export { adoptedLine, renderAdoptPreview } from '../config/adopt.js';
export type { AdoptResult, Adoption } from '../config/adopt.js';

/** What `fleet config adopt` asks for: every input but the registry, which is the service's. */
export type ConfigAdoptOptions = Omit<AdoptInput, 'registry'>;

@injectable()
export class ConfigAdoptService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  async run(options: ConfigAdoptOptions): Promise<Adoption> {
    return adoptLiveFile({ ...options, registry: await this.plugins.registry() });
  }
}
