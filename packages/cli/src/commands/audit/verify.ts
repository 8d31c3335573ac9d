import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import type { HostVerdict } from '@fleet/operator/audit/log.js';

export interface AuditVerifyJson {
  readonly schema: 'fleet.audit-verify/v1';
  readonly hosts: readonly HostVerdict[];
  /** What `--repair` did (a node home whose chain was broken). */
  readonly repair?: {
    readonly repaired: boolean;
    readonly sealedInto: string | null;
    readonly detail: string;
  };
}

export default class AuditVerify extends FleetCommand {
  static override summary = "Check the hash chain of every host's audit log (or one node home's).";
  static override description = `Each node's audit log is JSON lines, each carrying the sha256 of the line before it and a sequence number. The lines are read verbatim (through the controller, POST /v1/audit, scope config:read) and the chain is recomputed here: an edited, removed, reordered or torn entry is reported with its seq and line. Through a controller, the head it holds in memory is checked too, so an edit of the very last line or a cut tail is caught as well.

The log rotates into chained segments (audit.jsonl and closed audit.<seq>.jsonl files); every kept segment is checked, and a removed, replaced or renamed one is reported. Through a controller, the chain is also held against every audit head this operator's earlier verbs saw for that host (kept in $XDG_STATE_HOME/fleet/audit-heads/, a file per repository): a log rewritten behind your back — consistent, but without a record you saw — is reported as rewritten. After a clean verify the kept heads collapse to the one verified. --accept-current (after you investigated a reported rewrite, or a --repair): hold those hosts to their current head from now on.

Without flags: every host of fleet.yaml, concurrently. --host H (repeatable): only those. --home DIR: the log of a controller home on this machine, read directly, held against the head the controller recorded when it last stopped (audit.head.json). --home DIR --release: after a clean verify, let the node's retention prune segments holding write records up to the head verified (a node never prunes them otherwise; past its bound of segments it refuses writes until released). --home DIR --repair: with that controller stopped, seal a broken log aside (audit-sealed-<ts>/, untouched) and start a new chain whose first record names it — a node refuses writes while its chain is broken.

A log whose oldest records were pruned by retention says so: "intact (rotated: 1–N, since DATE)"; heads you saw that are older than the kept log are named as unchecked, never skipped silently.

Exit 0 when every chain is intact; 6 when any is broken or rewritten (the output names the host, segment, seq and kind of problem); else 5 when a host is unreachable (4 when it refused the token).`;
  static override examples = [
    '<%= config.bin %> audit verify',
    '<%= config.bin %> audit verify --host node-01 --json',
    '<%= config.bin %> audit verify --home /srv/node',
    '<%= config.bin %> audit verify --home /srv/node --repair',
    '<%= config.bin %> audit verify --host node-01 --accept-current',
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
    repair: Flags.boolean({
      description: 'with --home and the controller stopped: seal a broken log aside, start anew',
      dependsOn: ['home'],
    }),
    release: Flags.boolean({
      description:
        'with --home, after a clean verify: let retention prune segments holding write records up to the head verified',
      dependsOn: ['home'],
    }),
    'accept-current': Flags.boolean({
      description: 'hold these hosts to their current audit head from now on (after a rewrite)',
      exclusive: ['home'],
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
    const audit = await import('@fleet/operator/audit/log.js');
    const safe = (value: unknown) => audit.safeValue(core.escapeControl, value);
    let verdicts: HostVerdict[];
    let repair: AuditVerifyJson['repair'];

    if (flags.home !== undefined) {
      const { realpath } = await import('node:fs/promises');
      const home = await realpath(flags.home);
      let verdict = await audit.verifyLog(home, await audit.readHomeLog(home));
      if (flags.repair) {
        const onlyTorn = verdict.problems.every((p) => p.kind === 'torn');
        if (verdict.ok || onlyTorn) {
          repair = {
            repaired: false,
            sealedInto: null,
            detail: verdict.ok
              ? 'the chain is intact: nothing to repair'
              : 'only a torn last line: the controller moves it aside itself at its next start',
          };
        } else {
          const { repairHomeLog } = await import('@fleet/operator/audit/repair.js');
          const first = verdict.problems[0];
          const result = await repairHomeLog(
            home,
            first
              ? `${first.kind} at ${first.segment ?? 'line'} ${first.segmentLine ?? first.line}: ${first.message}`
              : 'broken',
          );
          repair = { repaired: true, sealedInto: result.sealedInto, detail: result.detail };
          verdict = await audit.verifyLog(home, await audit.readHomeLog(home));
        }
        if (!this.jsonEnabled()) this.note(safe(repair.detail));
      }
      if (flags.release && verdict.ok && verdict.head !== null) {
        const { releaseHomeLog } = await import('@fleet/operator/audit/release.js');
        const path = await releaseHomeLog(home, verdict.head, new Date());
        this.note(
          `released audit records through seq ${verdict.head.seq} (${path}): retention may prune segments holding them`,
        );
      } else if (flags.release) {
        this.note('nothing released: only an intact log is released');
      }
      verdicts = [{ ...verdict, home }];
    } else {
      const root = await this.findRepo(flags.repo);
      const repo = await core.loadRepo(root);
      const hosts = flags.host ?? Object.keys(repo.manifest.hosts).sort();
      for (const host of hosts) core.hostEntry(repo, host);
      const credentialsPath = core.defaultCredentialsPath(process.env);
      const credentials = await core.loadCredentials(credentialsPath);
      const repoKey = this.repoRoot ?? root;
      const kept = await core.readAuditHeads(repoKey);
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
          const seen = flags['accept-current'] ? [] : core.seenHeadsOf(kept, repoKey, host);
          return audit.verifyLog(host, await audit.readHostLog(client), seen);
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
      // Clean (or accepted): what was seen is settled; the head verified is held from now on.
      const settled = new Map(
        verdicts
          .filter((v) => v.error === undefined && (v.ok || flags['accept-current']))
          .map((v) => [v.host, v.head] as const),
      );
      await core.settleSeenHeads(repoKey, settled, 'audit verify');
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
          `${name} ${audit.verdictWord(verdict)}  ${verdict.records} record${verdict.records === 1 ? '' : 's'}${head}`,
        );
        for (const problem of verdict.problems) {
          const line = problem.segment
            ? `${problem.segment} line ${problem.segmentLine ?? problem.line}`
            : `line ${problem.line}`;
          const at = problem.seq === null ? line : `seq ${problem.seq} (${line})`;
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
    return { schema: 'fleet.audit-verify/v1', hosts: verdicts, ...(repair ? { repair } : {}) };
  }
}
