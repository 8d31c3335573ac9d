/**
 * `fleet config install`'s service: plans one host's domain and, confirmed, has the node install
 * exactly that plan (config/install-domain.ts; contract §8). The registry comes from the
 * container the CLI builds (docs/architecture.md "Services").
 */
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import {
  installDomain,
  type InstallDomainInput,
  type DomainInstall,
} from '../config/install-domain.js';

export { renderPlan, renderReceipt } from '../config/install-domain.js';
export type { DomainInstall } from '../config/install-domain.js';

/** What `fleet config install` asks for: every input but the registry, which is the service's. */
export type ConfigInstallOptions = Omit<InstallDomainInput, 'registry'>;

@injectable()
export class ConfigInstallService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  async run(options: ConfigInstallOptions): Promise<DomainInstall> {
    return installDomain({ ...options, registry: await this.plugins.registry() });
  }
}
