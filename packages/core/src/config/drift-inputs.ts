/**
 * What the drift engine is given (contract §8.1, §14): the transports that ask a host for its live
 * files (`ReadLive`), or for its files and its probers' answers in one request (`ReadSnapshot`),
 * the probers loaded on the operator side, and `runDrift`'s input. Types only: the assessment
 * (assessment.ts), the probers (drift-probers.ts) and the engine (drift.ts) all read them, so
 * they sit below all three.
 */
import type { DriftLayer, JsonObject, JsonValue } from '../interfaces/drift.js';
import type { Prober } from '../interfaces/prober.js';
import type { Git } from '../git.js';
import type { FleetRepo } from '../repo/load.js';
import type { RepoSource } from '../repo/at-commit.js';
import type { DriftHost } from '../report/drift-report.js';
import type { RuntimeSummary } from '../wire/summary.js';
import type { LiveFile } from './file-items.js';
import type { DomainRuntime } from './domain-runtime.js';
import type { FileTarget } from './file-target.js';

/** What the engine asks of one host: its live files (redacted), with their backups. */
export type ReadLive = (
  host: string,
  targets: readonly FileTarget[],
) => Promise<ReadonlyMap<string, LiveFile>>;

/**
 * A prober loaded on the operator side (its `evaluate` half is what runs here): a domain's, or a
 * supervisor's (`supervisor`: asked only of hosts whose fleet.yaml entry names that supervisor).
 */
export interface ProberRuntime {
  readonly id: string;
  readonly layer: DriftLayer;
  readonly domain?: string;
  readonly supervisor?: string;
  readonly prober: Pick<Prober, 'evaluate'>;
}

/** One prober the node is asked to run, with its parameters for that host. */
export interface ProbeCall {
  readonly prober: string;
  /** The domain the prober belongs to: a node lacking it answers `DOMAIN_NOT_SERVED`. */
  readonly domain?: string;
  readonly parameters: JsonObject;
}

/** What the node answered for one prober: its facts (redacted), or why it could not run. */
export type ProbeAnswer =
  | { readonly prober: string; readonly state: 'ok'; readonly facts: JsonValue }
  | {
      readonly prober: string;
      readonly state: 'error';
      readonly code: string;
      readonly message: string;
    };

/**
 * The live files and the probers' answers of one host, in ONE request (contract §14: one request per
 * host per verb): the transport the drift engine uses when it runs probers.
 */
export type ReadSnapshot = (
  host: string,
  targets: readonly FileTarget[],
  probes: readonly ProbeCall[],
  options?: { readonly runtime?: boolean },
) => Promise<{
  readonly files: ReadonlyMap<string, LiveFile>;
  readonly probes: readonly ProbeAnswer[];
  /**
   * The runtime journal summary, when `options.runtime` asked and the node answered it in the same
   * request; absent when it did not (an older node): drift then asks `readRuntimeSummary`.
   */
  readonly runtime?: RuntimeSummary;
}>;

export interface DriftInput {
  readonly repo: FleetRepo;
  readonly git: Git;
  /** Domains with their installers, by name. */
  readonly domains: ReadonlyMap<string, DomainRuntime>;
  readonly readLive: ReadLive;
  /** Hosts to inspect (default: every host in fleet.yaml). */
  readonly hosts?: readonly string[];
  /** Domains to inspect (default: every domain each host runs). */
  readonly domainFilter?: readonly string[];
  readonly concurrency?: number;
  readonly now: () => Date;
  /** Called as each host settles, with its entry of the report (streamed output, progress). */
  readonly onHost?: (host: string, status: DriftHost['status'], entry: DriftHost) => void;
  /**
   * The domains' probers (derived and runtime layers). With `readSnapshot`, each host's probers of
   * its domains run in the same request as its files and their items join the file items.
   */
  readonly probers?: readonly ProberRuntime[];
  readonly readSnapshot?: ReadSnapshot;
  /**
   * The host's runtime journal summary, unless `domainFilter` narrows the run to domains: a
   * transaction open or needing recovery is one `runtime` item of no domain, `stale`, with the
   * reason (issue 36). With `readSnapshot` it rides in the host's one snapshot request (contract
   * §14); this separate read (`GET /v1/summary`) is made only when the snapshot did not carry it —
   * a host with no files, a node that predates the field. A failed read is no word.
   */
  readonly readRuntimeSummary?: (host: string) => Promise<RuntimeSummary | null>;
  /** Where fleet.yaml and hosts/ were read (`loadRepoAtHead`); the history is read there too. */
  readonly source?: RepoSource;
}
