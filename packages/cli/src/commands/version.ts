import { Flags } from '@fleet/core/command';
import type { VersionReport, VersionRuntime } from '@fleet/core';
import { FleetCommand } from '../base-command.js';
import * as core from '@fleet/core';
import { HostProgress } from '../progress.js';

export default class Version extends FleetCommand {
  static override summary =
    "Report every host's runtime version, tool versions and PATH shadowing (read-only).";
  static override description = `Every host is asked concurrently (with a bound and a per-host timeout), in one request each, for its runtime's package, version and build identity (the generation it runs from, or a development build), the versions of the tools its fleet.yaml entry names (probes.tools) with every executable of each name along the PATH the node probes on (its policy's versions.path, else its user's login PATH, learned from the login shell; shown per host), every fleet executable along that PATH, on macOS fleet's launchd agents, and the state of the controller's unit or task under the host's supervisor (fleet.yaml supervisor: systemd-user, windows-task). The runtime is compared with canonicalVersion (current, stale when older); each plugin fleet.yaml names (plugins) is compared with the ones the node loaded from its runtime generation (missing when the node has none of that name, diverged when it has another version or tarball: upgrade it to an artifact that carries it); a probed tool that is not on PATH, or whose executable that runs first has lost its #! interpreter, is missing; an earlier fleet or probed tool on PATH that is dead or older than a later one is shadowing (stale); a controller unit that is disabled, not running, changed without a daemon-reload, or whose ExecStart is not the current generation or node id is a stale supervisor item (layer runtime), as fleet drift reports it. A stopped controller answers nothing: the host is unreachable. An unreachable host is reported and the run goes on.

Exit codes, the most urgent across hosts (contract §7): 4 when a host refused the credentials (denied), 5 when one was unreachable, 1 when any drifted or failed, 0 when every host is current; each host's entry keeps its own state. Writes nothing, unless --report-dir is given: then version.json, version.md and version.html are written there, never over an earlier report (version-2.*, version-3.*).`;
  static override examples = [
    '<%= config.bin %> version',
    '<%= config.bin %> version --host node-01 --json',
    '<%= config.bin %> version --report-dir reports/version/2026-05-01',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    host: Flags.string({ description: 'only this host (repeatable)', multiple: true }),
    'report-dir': Flags.directory({
      description: 'write version.json, version.md and version.html here',
    }),
    concurrency: Flags.integer({ description: 'hosts asked at once', default: 32, min: 1 }),
    timeout: Flags.integer({
      description: 'per-host timeout in milliseconds',
      default: 15_000,
      min: 1,
    }),
  };

  async run(): Promise<VersionReport> {
    const { flags } = await this.parse(Version);
    const root = await this.findRepo(flags.repo);
    const repo = await core.loadRepo(root);
    const hosts = flags.host ?? Object.keys(repo.manifest.hosts).sort();
    for (const host of hosts) core.hostEntry(repo, host); // UNKNOWN_HOST before anything else
    const credentialsPath = core.defaultCredentialsPath(process.env);
    const credentials = await core.loadCredentials(credentialsPath);
    const head = await core.createGit(root).run(['rev-parse', 'HEAD']);
    // Each host's supervisor prober rides in the same request (contract §5, §12).
    const probers = await core.loadSupervisorProbers(await this.loadRegistry());
    const progress = new HostProgress('version', hosts.length);
    const clients = new Map<string, ReturnType<typeof core.clientForHost>>();
    const client = (host: string) => {
      let made = clients.get(host);
      if (made === undefined) {
        made = core.clientForHost({
          repo,
          host,
          credentials,
          credentialsPath,
          timeoutMs: flags.timeout,
        });
        clients.set(host, made);
      }
      return made;
    };
    const report = await core.runVersionReport({
      repo,
      repoCommit: head.stdout.trim(),
      hosts,
      probers,
      readVersions: (host, request) => core.readVersionsThrough(client(host))(request),
      // The runtime journal beside the versions: an open or failed transaction is never current.
      readRuntimeSummary: async (host) => (await client(host).summary()).runtime,
      concurrency: flags.concurrency,
      now: () => new Date(),
      onHost: (_host, status) => progress.settled(status),
    });
    progress.finish();
    if (flags['report-dir']) {
      const written = await core.writeReportSet(flags['report-dir'], 'version', {
        json: `${JSON.stringify(report, null, 2)}\n`,
        md: core.renderVersionMarkdown(report),
        html: core.renderVersionHtml(report),
      });
      this.note(`report written: ${written.join(', ')}`);
    }
    if (!this.jsonEnabled()) {
      this.log(renderSummary(report, core.escapeControl, core.describeLoginPath));
    }
    process.exitCode = core.versionExitCode(report);
    return report;
  }
}

/** The human summary: one line per host, one indented line per item. */
function renderSummary(
  report: VersionReport,
  escape: (text: string) => string,
  describePath: (path: NonNullable<VersionRuntime['loginPath']>) => string,
): string {
  const lines = report.hosts.map((host) => {
    const runtime = host.runtime
      ? `  ${host.runtime.package}@${host.runtime.version}+${host.runtime.build.sha256?.slice(0, 12) ?? 'dev'}`
      : '';
    const detail = host.detail ? `  ${escape(host.detail)}` : '';
    const items = host.items.map(
      (item) =>
        `    ${item.state.padEnd(11)} ${item.kind.padEnd(9)} ${escape(item.name)}${item.version ? ` ${escape(withoutName(item.name, item.version))}` : ''}${
          item.state !== 'current' && item.detail ? `  (${escape(item.detail)})` : ''
        }`,
    );
    const path = host.runtime?.loginPath
      ? [`    ${escape(describePath(host.runtime.loginPath))}`]
      : [];
    return [`${host.host.padEnd(12)} ${host.status}${runtime}${detail}`, ...path, ...items].join(
      '\n',
    );
  });
  const { summary } = report;
  lines.push(
    `${summary.hosts} host${summary.hosts === 1 ? '' : 's'}: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.denied ? `${summary.denied} denied, ` : ''}${summary.errors} error${summary.errors === 1 ? '' : 's'} (canonical ${report.canonicalVersion}, commit ${report.repoCommit.slice(0, 12)})`,
  );
  return lines.join('\n');
}

/** A tool's `--version` line without the tool's name in front (`git version 2.39.5`, not `git git …`). */
export function withoutName(name: string, version: string): string {
  return version.startsWith(`${name} `) ? version.slice(name.length + 1) : version;
}
