/**
 * `fleet drift`'s service: asks every host for its live files, classifies each against its known
 * versions and reports (docs/classification.md; contract §8). Reads only; writes a report set
 * only where asked. The registry comes from the container the CLI builds (docs/architecture.md
 * "Services").
 */
import {
  loadDomainProbers,
  loadSupervisorProbers,
  renderDriftHtml,
  renderDriftMarkdown,
  runDrift,
  writeReportSet,
  type DriftHost,
  type DriftReport,
  type RepoSource,
} from '@fleet/core';
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import type { HostsProgress } from '../progress.js';
import { loadFleetContext } from '../config/context.js';
import { readLiveThroughController, readSnapshotThroughController } from '../config/live.js';

export interface DriftOptions {
  readonly root: string;
  /** Only these hosts (default: every host of fleet.yaml). */
  readonly hosts?: readonly string[];
  /** Only these domains (and then no supervisor prober). */
  readonly domains?: readonly string[];
  /** Hosts asked at once. */
  readonly concurrency: number;
  /** Per host. */
  readonly timeoutMs: number;
  /** Where to write drift.json, drift.md and drift.html (never over an earlier report). */
  readonly reportDir?: string;
  /** The commit the repository was read at, before any host is asked. */
  readonly onSource?: (source: RepoSource) => Promise<void>;
  /** The hosts about to be asked: the caller's progress, told of each as it settles. */
  readonly progress?: (hosts: readonly string[]) => HostsProgress;
  /** Each host's entry as it answers (after the progress heard of it). */
  readonly onHost?: (entry: DriftHost) => void;
}

export interface DriftOutcome {
  readonly report: DriftReport;
  /** The report files written under `reportDir` (none without it). */
  readonly written: readonly string[];
}

@injectable()
export class DriftService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  async run(options: DriftOptions): Promise<DriftOutcome> {
    const registry = await this.plugins.registry();
    for (const name of options.domains ?? []) registry.domain(name); // UNKNOWN_DOMAIN, exit 2
    const context = await loadFleetContext({
      root: options.root,
      registry,
      ...(options.domains ? { domains: options.domains } : {}),
      timeoutMs: options.timeoutMs,
    });
    try {
      await options.onSource?.(context.source);
      const hosts = options.hosts ?? Object.keys(context.repo.manifest.hosts).sort();
      // The domains' probers (derived, runtime layers) ride in the same request as the files, and
      // so does each host's supervisor prober (a stopped, disabled or stale controller unit)
      // unless a domain filter narrows the run to domains.
      const probers = [
        ...(await loadDomainProbers(registry, [...context.domains.keys()])),
        ...(options.domains ? [] : await loadSupervisorProbers(registry)),
      ];
      const progress = options.progress?.(hosts);
      const report = await runDrift({
        repo: context.repo,
        git: context.git,
        domains: context.domains,
        readLive: readLiveThroughController(context),
        probers,
        readSnapshot: readSnapshotThroughController(context),
        // The runtime journal beside the files: an open or failed transaction is never current.
        readRuntimeSummary: async (host) => (await context.client(host).summary()).runtime,
        hosts,
        ...(options.domains ? { domainFilter: options.domains } : {}),
        concurrency: options.concurrency,
        source: context.source,
        now: () => new Date(),
        onHost: (host, _status, entry) => {
          progress?.settled(host);
          options.onHost?.(entry);
        },
      });
      progress?.finish();
      const written = options.reportDir
        ? await writeReportSet(options.reportDir, 'drift', {
            json: `${JSON.stringify(report, null, 2)}\n`,
            md: renderDriftMarkdown(report),
            html: renderDriftHtml(report),
          })
        : [];
      return { report, written };
    } finally {
      context.close();
    }
  }
}
