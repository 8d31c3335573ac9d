/**
 * `fleet audit verify` (contract §5, docs/audit-log.md), the service: the hash chain of a node
 * home's audit log on this machine — with, on request, its repair (a broken chain sealed aside, a
 * new one started) and its release to retention — or of every host's log read through its
 * controller, held against the audit heads this operator's earlier verbs saw (a log rewritten
 * behind the operator's back is `rewritten`). Also the verdicts' lines for a person (pure).
 */
import { realpath } from 'node:fs/promises';
import * as core from '@fleet/core';
import {
  failedVerdict,
  readHomeLog,
  readHostLog,
  safeValue,
  verdictWord,
  verifyLog,
  type HostVerdict,
} from './log.js';
import type { HostsProgress } from '../progress.js';
import { releaseHomeLog } from './release.js';
import { repairHomeLog } from './repair.js';

/** The exit code of the verdicts, and text made safe to print (the command's, pure). */
export { safeValue, verifyExitCode } from './log.js';

export interface RepairOutcome {
  readonly repaired: boolean;
  readonly sealedInto: string | null;
  readonly detail: string;
}

export interface HomeVerifyInput {
  /** The node home (as given: its real path is what is read and reported). */
  readonly home: string;
  /** With the controller stopped: seal a broken log aside and start anew. */
  readonly repair: boolean;
  /** After a clean verify: let retention prune segments up to the head verified. */
  readonly release: boolean;
}

export interface HomeVerified {
  readonly verdict: HostVerdict;
  /** What `repair` did. */
  readonly repair?: RepairOutcome;
  /** What `release` did: the release file and the seq released through, or null (not intact). */
  readonly released?: { readonly path: string; readonly seq: number } | null;
}

export interface FleetVerifyInput {
  readonly root: string;
  /** The repository the kept audit heads are filed under. */
  readonly repoKey: string;
  /** Only these hosts (default: every host of fleet.yaml). */
  readonly hosts?: readonly string[];
  /** Hold the hosts to their current head from now on (after a rewrite was investigated). */
  readonly acceptCurrent: boolean;
  readonly concurrency: number;
  /** Per host. */
  readonly timeoutMs: number;
  readonly progress?: (total: number) => HostsProgress;
}

/** A node home's log, read directly, held against the head its controller recorded at stop. */
export async function verifyHomeAudit(input: HomeVerifyInput): Promise<HomeVerified> {
  const home = await realpath(input.home);
  let verdict = verifyLog(home, await readHomeLog(home));
  let repair: RepairOutcome | undefined;
  if (input.repair) {
    repair = await repairIfBroken(home, verdict);
    if (repair.repaired) verdict = verifyLog(home, await readHomeLog(home));
  }
  let released: HomeVerified['released'];
  if (input.release && verdict.ok && verdict.head !== null) {
    const path = await releaseHomeLog(home, verdict.head, new Date());
    released = { path, seq: verdict.head.seq };
  } else if (input.release) {
    released = null;
  }
  return {
    verdict: { ...verdict, home },
    ...(repair ? { repair } : {}),
    ...(released === undefined ? {} : { released }),
  };
}

/** Seals a broken chain aside; an intact one, or a torn last line alone, is left to the node. */
async function repairIfBroken(home: string, verdict: HostVerdict): Promise<RepairOutcome> {
  const onlyTorn = verdict.problems.every((p) => p.kind === 'torn');
  if (verdict.ok || onlyTorn) {
    return {
      repaired: false,
      sealedInto: null,
      detail: verdict.ok
        ? 'the chain is intact: nothing to repair'
        : 'only a torn last line: the controller moves it aside itself at its next start',
    };
  }
  const first = verdict.problems[0];
  const result = await repairHomeLog(
    home,
    first
      ? `${first.kind} at ${first.segment ?? 'line'} ${first.segmentLine ?? first.line}: ${first.message}`
      : 'broken',
  );
  return { repaired: true, sealedInto: result.sealedInto, detail: result.detail };
}

/**
 * Every host's log through its controller, concurrently. A clean (or accepted) host's head
 * becomes the one held from now on: what was seen before is settled.
 */
export async function verifyFleetAudit(input: FleetVerifyInput): Promise<HostVerdict[]> {
  const repo = await core.loadRepo(input.root);
  const hosts = input.hosts ?? Object.keys(repo.manifest.hosts).sort();
  for (const host of hosts) core.hostEntry(repo, host);
  const credentialsPath = core.defaultCredentialsPath(process.env);
  const credentials = await core.loadCredentials(credentialsPath);
  const kept = await core.readAuditHeads(input.repoKey);
  const progress = input.progress?.(hosts.length);
  const outcomes = await core.forEachHost(
    hosts,
    async (host) => {
      const client = core.clientForHost({
        repo,
        host,
        credentials,
        credentialsPath,
        timeoutMs: input.timeoutMs,
      });
      const seen = input.acceptCurrent ? [] : core.seenHeadsOf(kept, input.repoKey, host);
      return verifyLog(host, await readHostLog(client), seen);
    },
    {
      concurrency: input.concurrency,
      onSettled: (o) =>
        progress?.settled(
          o.ok
            ? o.value.status
            : o.error.exitCode === core.ExitCode.unreachable
              ? 'unreachable'
              : 'error',
        ),
    },
  );
  progress?.finish();
  const verdicts = outcomes.map((o) => (o.ok ? o.value : failedVerdict(o.host, o.error)));
  const settled = new Map(
    verdicts
      .filter((v) => v.error === undefined && (v.ok || input.acceptCurrent))
      .map((v) => [v.host, v.head] as const),
  );
  await core.settleSeenHeads(input.repoKey, settled, 'audit verify');
  return verdicts;
}

/** The verdicts for a person, a line each, every problem under its host, then a total (pure). */
export function verdictLines(
  verdicts: readonly HostVerdict[],
  escapeControl: (text: string) => string,
): string[] {
  const safe = (value: unknown) => safeValue(escapeControl, value);
  const lines: string[] = [];
  const width = Math.max(12, ...verdicts.map((v) => safe(v.host).length + 1));
  for (const verdict of verdicts) {
    const name = safe(verdict.host).padEnd(width);
    if (verdict.error) {
      lines.push(`${name} ${verdict.status.toUpperCase()}  ${safe(verdict.error.message)}`);
      continue;
    }
    const head = verdict.head
      ? `, head seq ${verdict.head.seq} (${verdict.head.sha256.slice(0, 12)})`
      : '';
    lines.push(
      `${name} ${verdictWord(verdict)}  ${verdict.records} record${verdict.records === 1 ? '' : 's'}${head}`,
    );
    for (const problem of verdict.problems) {
      const line = problem.segment
        ? `${problem.segment} line ${problem.segmentLine ?? problem.line}`
        : `line ${problem.line}`;
      const at = problem.seq === null ? line : `seq ${problem.seq} (${line})`;
      lines.push(`    ${safe(verdict.host)}: ${problem.kind} at ${at}: ${safe(problem.message)}`);
    }
  }
  const broken = verdicts.filter((v) => v.status === 'broken').length;
  const failed = verdicts.filter((v) => v.error !== undefined).length;
  const intact = verdicts.length - broken - failed;
  lines.push(
    `${verdicts.length} log${verdicts.length === 1 ? '' : 's'}: ${intact} intact, ${broken} broken, ${failed} not read`,
  );
  return lines;
}
