/**
 * `fleet drift` (contract §8.1), operator side: reads every canonical file's history once for the
 * whole fleet (two git processes), builds the history indexes once, then asks every host —
 * concurrently, bounded, one request per host — for its live files and classifies them. A host
 * that cannot be reached is reported `unreachable` and the run goes on.
 *
 * The transport is a parameter (`readLive`), so the engine is tested without a network and the
 * CLI passes the controller client.
 */
import type { FleetErrorLike } from '../errors.js';
import { forEachHost, type HostOutcome } from '../client/for-each-host.js';
import { hostEntry } from '../repo/load.js';
import {
  buildDriftReport,
  failedHostStatus,
  hostStatus,
  type DriftHost,
  type DriftReport,
} from '../report/drift-report.js';
import { assessHost, assessHostSnapshot, prepareAssessment } from './assessment.js';
import type { DriftInput } from './drift-inputs.js';
import { runtimeJournalProblem } from './runtime-journal.js';

// Where drift's callers have always imported them from: the transports and probers runDrift is
// given, and the assessment it starts with.
export { prepareAssessment } from './assessment.js';
export type { ProbeAnswer, ProberRuntime, ReadLive, ReadSnapshot } from './drift-inputs.js';

function failedHost(host: string, error: FleetErrorLike): DriftHost {
  return {
    host,
    status: failedHostStatus(error),
    detail: `${error.code}: ${error.message}`,
    items: [],
  };
}

export async function runDrift(input: DriftInput): Promise<DriftReport> {
  const hosts = input.hosts ?? Object.keys(input.repo.manifest.hosts).sort();
  for (const host of hosts) hostEntry(input.repo, host); // UNKNOWN_HOST before any work
  // The installers' checks run here too: a canonical install would refuse is an error in drift.
  const assessment = await prepareAssessment(input);
  const outcomes: HostOutcome<DriftHost>[] = await forEachHost(
    hosts,
    async (host) => {
      const readSummary = input.domainFilter ? undefined : input.readRuntimeSummary;
      const probers = input.probers ?? [];
      const read =
        input.readSnapshot && (probers.length > 0 || readSummary)
          ? await assessHostSnapshot(
              assessment,
              host,
              probers,
              input.readSnapshot,
              readSummary !== undefined,
            )
          : { items: (await assessHost(assessment, host)).map((file) => file.assessment.item) };
      const { items } = read;
      const journal =
        'runtime' in read && read.runtime !== undefined
          ? read.runtime
          : readSummary
            ? await readSummary(host).catch(() => null)
            : null;
      const problem = runtimeJournalProblem(host, journal);
      if (problem !== null) items.push({ layer: 'runtime', state: 'stale', detail: problem });
      return { host, status: hostStatus(items), items };
    },
    {
      ...(input.concurrency === undefined ? {} : { concurrency: input.concurrency }),
      onSettled: (outcome) => {
        const entry = outcome.ok ? outcome.value : failedHost(outcome.host, outcome.error);
        input.onHost?.(outcome.host, entry.status, entry);
      },
    },
  );
  return buildDriftReport({
    generatedAt: input.now(),
    repoCommit: assessment.snapshot.commit,
    ...(assessment.uncommitted ? { uncommitted: assessment.uncommitted } : {}),
    canonicalVersion: input.repo.manifest.canonicalVersion,
    hosts: outcomes.map((outcome) =>
      outcome.ok ? outcome.value : failedHost(outcome.host, outcome.error),
    ),
  });
}
