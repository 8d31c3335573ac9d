import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import {
  AuditService,
  safeValue,
  verdictLines,
  type AuditVerifyOptions,
  type HostVerdict,
} from '@fleet/operator/audit';
import { HostProgress } from '../../progress.js';

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
    let options: AuditVerifyOptions;
    if (flags.home !== undefined) {
      options = { home: { home: flags.home, repair: flags.repair, release: flags.release } };
    } else {
      const root = await this.findRepo(flags.repo);
      options = {
        fleet: {
          root,
          repoKey: this.repoRoot ?? root,
          ...(flags.host ? { hosts: flags.host } : {}),
          acceptCurrent: flags['accept-current'],
          concurrency: flags.concurrency,
          timeoutMs: flags.timeout,
          progress: (total) => new HostProgress('audit verify', total),
        },
      };
    }
    const service = await this.service(AuditService);
    const { verdicts, exitCode, repair, released } = await service.verify(options);
    if (repair && !this.jsonEnabled()) this.note(safeValue(core.escapeControl, repair.detail));
    if (released) {
      this.note(
        `released audit records through seq ${released.seq} (${released.path}): retention may prune segments holding them`,
      );
    } else if (released === null) {
      this.note('nothing released: only an intact log is released');
    }
    if (!this.jsonEnabled())
      for (const line of verdictLines(verdicts, core.escapeControl)) this.log(line);
    process.exitCode = exitCode;
    return { schema: 'fleet.audit-verify/v1', hosts: verdicts, ...(repair ? { repair } : {}) };
  }
}
