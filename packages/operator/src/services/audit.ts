/**
 * `fleet audit show|verify`'s service: the records of one audit log — the operator's own,
 * a node home's on this machine, or each named host's through its controller — and the hash
 * chain of a node home's log (with its repair and release) or of every host's, held against the
 * audit heads this operator saw (audit/show.ts, audit/verify.ts; contract §5, docs/audit-log.md).
 * Needs no plugin: nothing is injected.
 */
import { injectable } from '@fleet/core/di';
import type { HostVerdict, ShownRecord } from '../audit/log.js';
import { verifyExitCode } from '../audit/log.js';
import {
  readHomeAudit,
  readHostsAudit,
  readOperatorAudit,
  type HostReadError,
} from '../audit/show.js';
import {
  verifyFleetAudit,
  verifyHomeAudit,
  type FleetVerifyInput,
  type HomeVerified,
  type HomeVerifyInput,
} from '../audit/verify.js';

/** Text made safe to print, and the verdicts' lines for a person (the command's, pure). */
export { safeValue } from '../audit/log.js';
export { verdictLines } from '../audit/verify.js';
export type { HostVerdict } from '../audit/log.js';

export interface AuditShowOptions {
  /** Each named host's log through its controller (the hosts of fleet.yaml under `root`). */
  readonly hosts?: { readonly root: string; readonly names: readonly string[] };
  /** Else the log of this node home on this machine; else the operator's own log. */
  readonly home?: string;
  /** Only the newest N records (per log). */
  readonly limit?: number;
  /** Per host. */
  readonly timeoutMs: number;
}

export type AuditShowSource =
  | { readonly kind: 'operator'; readonly path: string }
  | { readonly kind: 'node'; readonly home: string; readonly path: string }
  | { readonly kind: 'controller'; readonly hosts: readonly string[] };

/** `fleet audit show --json`'s document. */
export interface AuditShown {
  readonly schema: 'fleet.audit/v1';
  readonly source: AuditShowSource;
  readonly records: readonly ShownRecord[];
  /** Hosts that could not be read (with `hosts`). */
  readonly errors?: readonly HostReadError[];
}

/** A node home's log on this machine, or else every named host's (default: all of fleet.yaml). */
export type AuditVerifyOptions =
  { readonly home: HomeVerifyInput } | { readonly fleet: FleetVerifyInput };

export interface AuditVerified {
  readonly verdicts: readonly HostVerdict[];
  /** 6 when any chain is broken or rewritten; else the first unread host's (5, 4…); else 0. */
  readonly exitCode: number;
  /** What a node home's repair did. */
  readonly repair?: HomeVerified['repair'];
  /** What a node home's release did (null: nothing released, the log was not intact). */
  readonly released?: HomeVerified['released'];
}

@injectable()
export class AuditService {
  /** The records of one log: the hosts', else the node home's, else the operator's own. */
  async show(options: AuditShowOptions): Promise<AuditShown> {
    const limit = options.limit === undefined ? {} : { limit: options.limit };
    if (options.hosts !== undefined) {
      const { records, errors } = await readHostsAudit({
        root: options.hosts.root,
        hosts: options.hosts.names,
        ...limit,
        timeoutMs: options.timeoutMs,
      });
      return {
        schema: 'fleet.audit/v1',
        source: { kind: 'controller', hosts: options.hosts.names },
        records,
        ...(errors.length > 0 ? { errors } : {}),
      };
    }
    if (options.home !== undefined) {
      const { home, path, records } = await readHomeAudit({ home: options.home, ...limit });
      return { schema: 'fleet.audit/v1', source: { kind: 'node', home, path }, records };
    }
    const { path, records } = await readOperatorAudit(limit);
    return { schema: 'fleet.audit/v1', source: { kind: 'operator', path }, records };
  }

  /** The hash chain of a node home's log, or of the fleet's hosts' logs, and the exit code. */
  async verify(options: AuditVerifyOptions): Promise<AuditVerified> {
    if ('home' in options) {
      const { verdict, repair, released } = await verifyHomeAudit(options.home);
      const verdicts = [verdict];
      return {
        verdicts,
        exitCode: verifyExitCode(verdicts),
        ...(repair ? { repair } : {}),
        ...(released === undefined ? {} : { released }),
      };
    }
    const verdicts = await verifyFleetAudit(options.fleet);
    return { verdicts, exitCode: verifyExitCode(verdicts) };
  }
}
