import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import type { AuditLogKind } from '../../audit-table.js';
import * as core from '@fleet/core';
import { AuditService, safeValue, type AuditShown } from '@fleet/operator/audit';
import { renderAuditTable } from '../../audit-table.js';

export default class AuditShow extends FleetCommand {
  static override summary =
    'Print an audit log: your own (operator) log, a host’s, or a node home’s.';
  static override description = `Without flags: the operator's own log of the verbs it ran ($XDG_STATE_HOME/fleet/operator.jsonl, default ~/.local/state/fleet/operator.jsonl), one line per host operation, keyed by the same operation id as the node's record.

--host H (repeatable): the node's audit log through its controller (needs config:read). --home DIR: the log of a controller running on this machine with that home (<DIR>/.local/state/fleet/audit.jsonl and the closed segments audit.<seq>.jsonl it rotated into, oldest first), read directly.

A write names its commit: the COMMIT column shows the fleet repository commit an install's content was rendered from (an adopt's: the commit it read at), 12 digits; --json keeps the full id in repoCommit. "-": the record names none (a read, a runtime or token verb, a node that predates the field).

Control characters in records are printed escaped (\\x1b…), never raw. --json prints { schema: "fleet.audit/v1", source, records }. To check a log's hash chain, use \`fleet audit verify\`.`;
  static override examples = [
    '<%= config.bin %> audit show',
    '<%= config.bin %> audit show --host node-01 --limit 20',
    '<%= config.bin %> audit show --home /srv/node --json',
  ];
  static override repoLine = 'stderr' as const; // stdout carries the log's lines
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    host: Flags.string({
      description: 'a host’s log, through its controller (repeatable)',
      multiple: true,
      exclusive: ['home'],
    }),
    home: Flags.directory({
      description: 'the log of the node home DIR on this machine',
      exists: true,
      exclusive: ['host'],
    }),
    limit: Flags.integer({ description: 'only the newest N records (per log)', min: 1 }),
    timeout: Flags.integer({
      description: 'per-host timeout in milliseconds',
      default: 10_000,
      min: 1,
    }),
  };

  async run(): Promise<AuditShown> {
    const { flags } = await this.parse(AuditShow);
    const safe = (value: unknown) => safeValue(core.escapeControl, value);
    const palette = await this.palette();
    const service = await this.service(AuditService);
    const shown = await service.show({
      ...(flags.host === undefined
        ? {}
        : { hosts: { root: await this.findRepo(flags.repo), names: flags.host } }),
      ...(flags.home === undefined ? {} : { home: flags.home }),
      ...(flags.limit === undefined ? {} : { limit: flags.limit }),
      timeoutMs: flags.timeout,
    });
    if (shown.errors?.[0]) process.exitCode = shown.errors[0].exitCode;
    if (this.jsonEnabled()) return shown;

    // The human form: a table, only when there is a record to show (else a note on stderr).
    const { source, records } = shown;
    const kind: AuditLogKind = source.kind === 'controller' ? 'hosts' : source.kind;
    if (records.length > 0)
      for (const line of renderAuditTable(kind, records, safe, (outcome) => palette.state(outcome)))
        this.log(line);
    if (source.kind === 'controller') {
      for (const error of shown.errors ?? []) this.note(`${error.host}: ${safe(error.message)}`);
      if (records.length === 0 && shown.errors === undefined) this.note('no audit records');
    } else if (records.length === 0) {
      this.note(
        source.kind === 'node'
          ? `no audit records in ${safe(source.path)}`
          : `no records in the operator log ${safe(source.path)}`,
      );
    }
    return shown;
  }
}
