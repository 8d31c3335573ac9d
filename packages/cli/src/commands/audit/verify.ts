import { Flags } from '@oclif/core';
import { FleetCommand } from '../../base-command.js';
import type { HostVerdict } from '../../audit/log.js';

export interface AuditVerifyJson {
  readonly schema: 'fleet.audit-verify/v1';
  readonly hosts: readonly HostVerdict[];
}

export default class AuditVerify extends FleetCommand {
  static override summary = "Check the hash chain of every host's audit log (or one node home's).";
  static override description = `Each node's audit log is JSON lines, each carrying the sha256 of the line before it and a sequence number. The lines are read verbatim (through the controller, POST /v1/audit, scope config:read) and the chain is recomputed here: an edited, removed, reordered or torn entry is reported with its seq and line. Through a controller, the head it holds in memory is checked too, so an edit of the very last line or a cut tail is caught as well.

Without flags: every host of fleet.yaml, concurrently. --host H (repeatable): only those. --home DIR: the log of a controller home on this machine, read directly (without a controller's head, a change to the very last line cannot be told from a shorter log).

Exit 0 when every chain is intact; 6 when any is broken (the output names the host, seq and kind of problem); else 5 when a host is unreachable (4 when it refused the token).`;
  static override examples = [
    '<%= config.bin %> audit verify',
    '<%= config.bin %> audit verify --host node-01 --json',
    '<%= config.bin %> audit verify --home /srv/node',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    host: Flags.string({
      description: 'only this host (repeatable)',
      multiple: true,
      exclusive: ['home'],
    }),
    home: Flags.directory({
      description: 'verify the log of the node home DIR on this machine',
      exists: true,
      exclusive: ['host'],
    }),
    concurrency: Flags.integer({ description: 'hosts asked at once', default: 32, min: 1 }),
    timeout: Flags.integer({
      description: 'per-host timeout in milliseconds',
      default: 10_000,
      min: 1,
    }),
  };

  async run(): Promise<AuditVerifyJson> {
    const { flags } = await this.parse(AuditVerify);
    const core = await import('@fleet/core');
    const audit = await import('../../audit/log.js');
    const safe = (value: unknown) => audit.safeValue(core.escapeControl, value);
    let verdicts: HostVerdict[];

    if (flags.home !== undefined) {
      const { realpath } = await import('node:fs/promises');
      const home = await realpath(flags.home);
      const verdict = await audit.verifyLog(home, await audit.readHomeLog(home));
      verdicts = [{ ...verdict, home }];
    } else {
      const root = await this.findRepo(flags.repo);
      const repo = await core.loadRepo(root);
      const hosts = flags.host ?? Object.keys(repo.manifest.hosts).sort();
      for (const host of hosts) core.hostEntry(repo, host);
      const credentialsPath = core.defaultCredentialsPath(process.env);
      const credentials = await core.loadCredentials(credentialsPath);
      const { HostProgress } = await import('../../progress.js');
      const progress = new HostProgress('audit verify', hosts.length);
      const outcomes = await core.forEachHost(
        hosts,
        async (host) => {
          const client = core.clientForHost({
            repo,
            host,
            credentials,
            credentialsPath,
            timeoutMs: flags.timeout,
          });
          return audit.verifyLog(host, await audit.readHostLog(client));
        },
        {
          concurrency: flags.concurrency,
          onSettled: (o) =>
            progress.settled(
              o.ok ? o.value.status : o.error.exitCode === 5 ? 'unreachable' : 'error',
            ),
        },
      );
      progress.finish();
      verdicts = outcomes.map((o) => (o.ok ? o.value : audit.failedVerdict(o.host, o.error)));
    }

    if (!this.jsonEnabled()) {
      const width = Math.max(12, ...verdicts.map((v) => safe(v.host).length + 1));
      for (const verdict of verdicts) {
        const name = safe(verdict.host).padEnd(width);
        if (verdict.error) {
          this.log(`${name} ${verdict.status.toUpperCase()}  ${safe(verdict.error.message)}`);
          continue;
        }
        const head = verdict.head
          ? `, head seq ${verdict.head.seq} (${verdict.head.sha256.slice(0, 12)})`
          : '';
        this.log(
          `${name} ${verdict.ok ? 'intact' : 'BROKEN'}  ${verdict.records} record${verdict.records === 1 ? '' : 's'}${head}`,
        );
        for (const problem of verdict.problems) {
          const at =
            problem.seq === null
              ? `line ${problem.line}`
              : `seq ${problem.seq} (line ${problem.line})`;
          this.log(`    ${safe(verdict.host)}: ${problem.kind} at ${at}: ${safe(problem.message)}`);
        }
      }
      const broken = verdicts.filter((v) => v.status === 'broken').length;
      const failed = verdicts.filter((v) => v.error !== undefined).length;
      const intact = verdicts.length - broken - failed;
      this.log(
        `${verdicts.length} log${verdicts.length === 1 ? '' : 's'}: ${intact} intact, ${broken} broken, ${failed} not read`,
      );
    }
    process.exitCode = audit.verifyExitCode(verdicts);
    return { schema: 'fleet.audit-verify/v1', hosts: verdicts };
  }
}
