/**
 * `fleet config plan`'s service: what an install would do on one host — each file's
 * classification, its redacted diff, the live sha256 planned against and the coupled actions
 * (docs/classification.md; contract §8). Reads the node, writes nothing. The registry comes from
 * the container the CLI builds (docs/architecture.md "Services").
 */
import {
  hostEntry,
  loadDomainProbers,
  planHost,
  planRefusal,
  prepareAssessment,
  type DomainPlan,
  type FleetError,
  type RepoSource,
} from '@fleet/core';
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { loadFleetContext } from '../config/context.js';
import { readLiveThroughController, readSnapshotThroughController } from '../config/live.js';

export { renderPlan } from '../config/render.js';

export interface ConfigPlanOptions {
  readonly root: string;
  readonly host: string;
  /** One domain (default: every domain the host runs). */
  readonly domain?: string;
  readonly timeoutMs: number;
  /** The commit the repository was read at, before the host is asked. */
  readonly onSource?: (source: RepoSource) => Promise<void>;
}

export interface ConfigPlanOutcome {
  readonly plans: DomainPlan[];
  /** A node that cannot serve a domain: its refusal (DOMAIN_NOT_SERVED, POLICY_REFUSED, exit 7). */
  readonly refusal: FleetError | undefined;
}

@injectable()
export class ConfigPlanService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  async run(options: ConfigPlanOptions): Promise<ConfigPlanOutcome> {
    const registry = await this.plugins.registry();
    const context = await loadFleetContext({
      root: options.root,
      registry,
      timeoutMs: options.timeoutMs,
    });
    try {
      await options.onSource?.(context.source);
      hostEntry(context.repo, options.host); // UNKNOWN_HOST before the node is asked
      const assessment = await prepareAssessment({
        repo: context.repo,
        git: context.git,
        source: context.source,
        domains: context.domains,
        domainFilter: options.domain === undefined ? undefined : [options.domain],
        readLive: readLiveThroughController(context),
        // The domain's derived layer (the router's volume) is planned too, in the same request.
        probers: await loadDomainProbers(registry, [...context.domains.keys()]),
        readSnapshot: readSnapshotThroughController(context),
      });
      const plans = await planHost(assessment, options.host, options.domain);
      return { plans, refusal: planRefusal(plans) };
    } finally {
      context.close();
    }
  }
}
