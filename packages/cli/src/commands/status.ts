import { Flags } from '@fleet/core/command';
import type { Palette } from '@fleet/core/command';
import { FleetCommand } from '../base-command.js';
import * as core from '@fleet/core';
import { STATUS_HOOK } from '@fleet/core';
import { StatusService, type StatusReport } from '@fleet/operator/status';
import { WaitingProgress } from '../progress.js';
import { renderTable } from '../table.js';

export default class Status extends FleetCommand {
  static override summary =
    'One screen for the whole fleet: reachability, runtime, last drift, offline_pending, runtime transactions.';
  static override description = `Reads fleet.yaml and hosts/ as committed at HEAD, as drift does (named on the first line; uncommitted changes are not used, and a warning says so). Every host is asked once, concurrently (with a bound and a per-host timeout), through GET /v1/summary — which config:read or versions:read opens: who it is, the runtime it runs and its health, and whether a runtime transaction is in progress or needs recovery; a degraded host is also asked GET /v1/health, and each failing check is listed with its reason (an audit log that cannot be appended, a disk full). With that: the runtime against canonicalVersion (as fleet version judges it), the host's state in the repository's newest drift report (reports/drift/, and its age), and offline_pending from the harness reconcile's state in your state directory. Progress on stderr names the hosts still being waited for. Read-only: writes nothing.

Exit codes, the most urgent across hosts: 4 when a host refused the credentials, 5 when one was unreachable, 1 when one needs attention (each reason is listed), 0 when all are ok.`;
  static override examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> status --json',
    '<%= config.bin %> status --timeout 2000',
  ];
  static override repoLine = 'commit' as const; // on the commit line
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    concurrency: Flags.integer({ description: 'hosts asked at once', default: 32, min: 1 }),
    timeout: Flags.integer({
      description: 'per-host timeout in milliseconds',
      default: 5_000,
      min: 1,
    }),
  };

  async run(): Promise<StatusReport> {
    const { flags } = await this.parse(Status);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(StatusService);
    const report = await service.run({
      root,
      concurrency: flags.concurrency,
      timeoutMs: flags.timeout,
      runStatusHooks: () => this.config.runHook(STATUS_HOOK, { env: process.env }, 10_000, true),
      onSource: (source) => this.noteSource(source),
      progress: (hosts) => new WaitingProgress('status', hosts),
    });
    if (!this.jsonEnabled()) {
      this.log(
        renderStatus(report, {
          escape: core.escapeControl,
          formatAge: core.formatAge,
          palette: await this.palette(),
          renderTable,
        }),
      );
    }
    process.exitCode = core.statusExitCode(report.hosts.map((host) => host.state));
    return report;
  }
}

interface StatusRendering {
  readonly escape: (text: string) => string;
  readonly formatAge: (seconds: number) => string;
  readonly palette: Palette;
  readonly renderTable: typeof renderTable;
}

function renderStatus(
  report: StatusReport,
  { escape, formatAge, palette, renderTable }: StatusRendering,
): string {
  const drift = report.drift.report
    ? `${report.drift.report}${report.hosts[0]?.drift.ageSeconds != null ? ` (${formatAge(report.hosts[0].drift.ageSeconds)} ago)` : ''}`
    : 'none';
  const lines = [
    `canonical ${report.canonicalVersion}, repo ${report.repoCommit?.slice(0, 12) ?? '(no commit)'}, last drift report: ${drift}`,
  ];
  if (report.drift.problem) lines.push(`warning: ${escape(report.drift.problem)}`);
  if (report.reconcile.problem) lines.push(`warning: ${escape(report.reconcile.problem)}`);
  const rows: string[][] = [];
  for (const host of report.hosts) {
    const runtime = host.runtime
      ? `${host.runtime.version}+${host.runtime.build.sha256?.slice(0, 12) ?? 'dev'} ${host.runtime.state}`
      : (host.error?.code ?? '-');
    const driftCell =
      host.drift.state === null
        ? '-'
        : `${host.drift.state}${host.drift.ageSeconds === null ? '' : ` ${formatAge(host.drift.ageSeconds)}`}`;
    const txn = host.transaction
      ? host.transaction.attention === 'none'
        ? `${host.transaction.kind} ${host.transaction.outcome ?? host.transaction.lastStep}`
        : `${host.transaction.kind} ${host.transaction.attention}`
      : '-';
    rows.push([
      host.host,
      host.state,
      runtime,
      driftCell,
      host.offlinePending ? `since ${host.offlinePending.since.slice(0, 16)}` : '-',
      txn,
    ]);
  }
  lines.push(
    ...renderTable(
      ['HOST', 'STATE', 'RUNTIME', 'DRIFT', 'PENDING', 'TRANSACTION'],
      rows.map((row) => row.map(escape)),
      // The host's state, and the drift state that leads its cell, in their colours.
      (cell, column) =>
        column === 1
          ? palette.state(cell)
          : column === 3
            ? cell.replace(/^\S+/, (state) => palette.state(state))
            : cell,
    ),
  );
  for (const host of report.hosts) {
    if (host.error) lines.push(`  ${host.host}: ${escape(host.error.message)}`);
    for (const reason of host.attention) lines.push(`  ${host.host}: ${escape(reason)}`);
  }
  const { summary } = report;
  lines.push(
    `${summary.hosts} host${summary.hosts === 1 ? '' : 's'}: ${summary.ok} ok, ${summary.attention} attention, ${summary.unreachable} unreachable, ${summary.denied} denied, ${summary.error} error`,
  );
  return lines.join('\n');
}
