import { Flags } from '@oclif/core';
import type { DriftReport } from '@fleet/core';
import { FleetCommand } from '../base-command.js';

export default class Drift extends FleetCommand {
  static override summary = 'Report how every host differs from the repository (read-only).';
  static override description = `Every host is asked concurrently (with a bound and a per-host timeout) for its live files, redacted on the node, and each file is classified against the repository's history: current, stale (every line was published: safe to replace), diverged (local lines: adopt them or install with --force), missing, unsupported or error. An unreachable host is reported and the run goes on.

Exit 0 when every host is current, 1 when any host drifted or could not be reached. Writes nothing, unless --report-dir is given: then drift.json, drift.md and drift.html are written there, never over an earlier report (drift-2.*, drift-3.*).`;
  static override examples = [
    '<%= config.bin %> drift',
    '<%= config.bin %> drift --host node-01 --domain harness-policy --json',
    '<%= config.bin %> drift --report-dir reports/drift/2026-05-01',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    host: Flags.string({ description: 'only this host (repeatable)', multiple: true }),
    domain: Flags.string({ description: 'only this domain (repeatable)', multiple: true }),
    'report-dir': Flags.directory({
      description: 'write drift.json, drift.md and drift.html here',
    }),
    concurrency: Flags.integer({ description: 'hosts asked at once', default: 32, min: 1 }),
    timeout: Flags.integer({
      description: 'per-host timeout in milliseconds',
      default: 10_000,
      min: 1,
    }),
  };

  async run(): Promise<DriftReport> {
    const { flags } = await this.parse(Drift);
    const root = await this.findRepo(flags.repo);
    const core = await import('@fleet/core');
    const { loadFleetContext } = await import('../config/context.js');
    const { readLiveThroughController, readSnapshotThroughController } =
      await import('../config/live.js');
    const { HostProgress } = await import('../progress.js');
    const registry = await this.loadRegistry();
    for (const name of flags.domain ?? []) registry.domain(name);
    const context = await loadFleetContext({
      root,
      registry,
      domains: flags.domain,
      timeoutMs: flags.timeout,
    });
    const hosts = flags.host ?? Object.keys(context.repo.manifest.hosts).sort();
    // The domains' probers (derived, runtime layers) ride in the same request as the files, and
    // so does each host's supervisor prober (a stopped, disabled or stale controller unit) unless
    // --domain narrows the run to domains.
    const probers = [
      ...(await core.loadDomainProbers(registry, [...context.domains.keys()])),
      ...(flags.domain ? [] : await core.loadSupervisorProbers(registry)),
    ];
    const progress = new HostProgress('drift', hosts.length);
    const report = await core.runDrift({
      repo: context.repo,
      git: context.git,
      domains: context.domains,
      readLive: readLiveThroughController(context),
      probers,
      readSnapshot: readSnapshotThroughController(context),
      hosts,
      ...(flags.domain ? { domainFilter: flags.domain } : {}),
      concurrency: flags.concurrency,
      now: () => new Date(),
      onHost: (_host, status) => progress.settled(status),
    });
    progress.finish();
    if (flags['report-dir']) {
      const written = await core.writeReportSet(flags['report-dir'], 'drift', {
        json: `${JSON.stringify(report, null, 2)}\n`,
        md: core.renderDriftMarkdown(report),
        html: core.renderDriftHtml(report),
      });
      this.note(`report written: ${written.join(', ')}`);
    }
    if (!this.jsonEnabled()) this.log(renderSummary(report, core.escapeControl));
    process.exitCode = core.driftExitCode(report);
    return report;
  }
}

/** States whose item says *why* on the line: without the reason an error is not actionable. */
const WHY_STATES = new Set(['error', 'unsupported']);

/**
 * The human summary: one line per host, one indented line per item that is not current — an
 * error or unsupported item with its reason (`DOMAIN_NOT_SERVED: …`, `POLICY_REFUSED: …`).
 */
function renderSummary(report: DriftReport, escape: (text: string) => string): string {
  const lines = report.hosts.map((host) => {
    const items = host.items
      .filter((item) => item.state !== 'current')
      .map(
        (item) =>
          `    ${item.state.padEnd(11)} ${item.layer.padEnd(8)} ${escape(item.path ?? item.domain ?? '')}${
            item.localLines
              ? `  (${item.localLines} local line${item.localLines === 1 ? '' : 's'})`
              : ''
          }${WHY_STATES.has(item.state) && item.detail ? `  ${escape(item.detail)}` : ''}`,
      );
    const detail = host.detail ? `  ${escape(host.detail)}` : '';
    return [`${host.host.padEnd(12)} ${host.status}${detail}`, ...items].join('\n');
  });
  const { summary } = report;
  lines.push(
    `${summary.hosts} host${summary.hosts === 1 ? '' : 's'}: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.errors} error${summary.errors === 1 ? '' : 's'} (commit ${report.repoCommit.slice(0, 12)})`,
  );
  return lines.join('\n');
}
