import { Flags, plainPalette, type Palette } from '@fleet/core/command';
import type { DriftHost, DriftReport } from '@fleet/core';
import { FleetCommand } from '../base-command.js';
import * as core from '@fleet/core';
import { DriftService } from '@fleet/operator/drift';
import { WaitingProgress } from '../progress.js';

export default class Drift extends FleetCommand {
  static override summary = 'Report how every host differs from the repository (read-only).';
  static override description = `Reads fleet.yaml, hosts/ and domains/ as committed at HEAD (named on the first line; uncommitted changes are not used, and a warning says so). Every host is asked concurrently (with a bound and a per-host timeout) for its live files, redacted on the node, and each file is classified against its known versions — every version of the canonical in the repository's history and every content fleet itself wrote on that host (docs/classification.md):

  current      equal to the desired view
  stale        equal, whole, to a known version: safe to replace (the version is named)
  modified     every line known, the whole not (lines deleted, moved, repeated, emptied): a hand change
  diverged     some lines in no known version: local edits (adopt them, or install with --force)
  missing      no file (or block), and fleet never wrote one there
  deleted      fleet wrote it there and someone removed it (never recreated without --force)
  unsupported  the node cannot hold it;  error: a render or the domain's checks refuse it

Each host's lines are printed as it answers (a host that hangs holds back only its own), and stderr names the hosts still waited for after a second. An unreachable host is reported and the run goes on. Exit codes, the most urgent across hosts (contract §7): 4 when a host refused the credentials (denied), 5 when one was unreachable, 1 when any drifted or failed, 0 when every host is current; each host's entry keeps its own state. Writes nothing, unless --report-dir is given: then drift.json, drift.md and drift.html are written there, never over an earlier report (drift-2.*, drift-3.*).`;
  static override examples = [
    '<%= config.bin %> drift',
    '<%= config.bin %> drift --host node-01 --domain harness-policy --json',
    '<%= config.bin %> drift --report-dir reports/drift/2026-05-01',
  ];
  static override repoLine = 'commit' as const; // on the commit line
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
    const human = !this.jsonEnabled();
    const palette = await this.palette();
    let progress: WaitingProgress | undefined;
    const service = await this.service(DriftService);
    const { report, written } = await service.run({
      root,
      ...(flags.host ? { hosts: flags.host } : {}),
      ...(flags.domain ? { domains: flags.domain } : {}),
      concurrency: flags.concurrency,
      timeoutMs: flags.timeout,
      ...(flags['report-dir'] ? { reportDir: flags['report-dir'] } : {}),
      onSource: (source) => this.noteSource(source),
      // Progress names the hosts still waited for (contract §7): on a terminal one line rewritten
      // in place, otherwise a line every two seconds once a host is slow, so a log shows who held
      // the run up; nothing when every host answers within a second.
      progress: (hosts) => (progress = new WaitingProgress('drift', hosts)),
      onHost: (entry) => {
        // Streamed: each host's lines as it answers; a hung host holds back only its own.
        if (human) {
          progress?.clear();
          this.log(renderHost(entry, core.escapeControl, palette));
        }
      },
    });
    if (written.length > 0) this.note(`report written: ${written.join(', ')}`);
    if (human) this.log(renderSummary(report, core.escapeControl, flags.domain));
    process.exitCode = core.driftExitCode(report);
    return report;
  }
}

/**
 * Whether an item says *why* on its line (the reason its JSON carries, `detail`): an error or
 * unsupported item (without the reason it is not actionable), a missing file item (whether the
 * file does not exist or exists without its managed block: "missing file" alone reads as the
 * first), and every item of the derived and runtime layers, whose state alone names no cause
 * (`stale runtime` — a unit disabled, a daemon-reload pending, another node id). A file item's
 * other states say what they are (the version, the local lines) in the plan and the report.
 */
export function saysWhy(item: Pick<DriftHost['items'][number], 'state' | 'layer'>): boolean {
  if (item.state === 'current') return false;
  if (item.state === 'error' || item.state === 'unsupported') return true;
  return item.layer === 'file' ? item.state === 'missing' : true;
}

/** What to do about the states that refuse (a line each, only for states present). */
function hints(report: DriftReport): string[] {
  const states = new Set(report.hosts.flatMap((host) => host.items.map((item) => item.state)));
  const out: string[] = [];
  if (states.has('diverged') || states.has('modified')) {
    out.push(
      'hand changes (diverged, modified) are never replaced without --force: keep them with `fleet config adopt HOST PATH` (`--promote` makes them the canonical), or overwrite with `fleet config install … --force`',
    );
  }
  if (states.has('deleted')) {
    out.push(
      'deleted files are never recreated by reconcile: `fleet config install HOST DOMAIN --file PATH --confirm --force` recreates one',
    );
  }
  return out;
}

/**
 * One host's lines: the host and its status, one indented line per item that is not current — with
 * its reason where the state alone does not say it ({@link saysWhy}: `DOMAIN_NOT_SERVED: …`,
 * `the file has no managed block …`, a stale runtime item's disagreements).
 */
export function renderHost(
  host: DriftHost,
  escape: (text: string) => string,
  palette: Palette = plainPalette,
): string {
  const items = host.items
    .filter((item) => item.state !== 'current')
    .map(
      (item) =>
        `    ${palette.state(item.state)}${' '.repeat(Math.max(1, 12 - item.state.length))}${(item.block === true ? 'block' : item.layer).padEnd(8)} ${escape(item.path ?? item.domain ?? '')}${
          item.localLines
            ? `  (${item.localLines} local line${item.localLines === 1 ? '' : 's'})`
            : ''
        }${saysWhy(item) && item.detail ? `  ${escape(item.detail)}` : ''}`,
    );
  const detail = host.detail ? `  ${escape(host.detail)}` : '';
  return [`${host.host.padEnd(12)} ${palette.state(host.status)}${detail}`, ...items].join('\n');
}

/**
 * The closing lines, after every host's own (streamed as each answered): counts and hints — or,
 * for `--domain X` when no host runs X, that there was nothing to compare (not "3 current", which
 * reads as checked and fine).
 */
export function renderSummary(
  report: DriftReport,
  escape: (text: string) => string,
  domains?: readonly string[],
): string {
  if (
    domains !== undefined &&
    domains.length > 0 &&
    report.hosts.every((host) => host.status === 'current' && host.items.length === 0)
  ) {
    const asked = `${report.summary.hosts} host${report.summary.hosts === 1 ? '' : 's'}`;
    return `no host runs ${domains.map(escape).join(', ')}: nothing to compare (${asked} in fleet.yaml, commit ${report.repoCommit.slice(0, 12)})`;
  }
  const { summary } = report;
  return [
    `${summary.hosts} host${summary.hosts === 1 ? '' : 's'}: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.denied ? `${summary.denied} denied, ` : ''}${summary.errors} error${summary.errors === 1 ? '' : 's'} (commit ${report.repoCommit.slice(0, 12)})`,
    ...hints(report),
  ].join('\n');
}
