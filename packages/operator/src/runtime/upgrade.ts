/**
 * `fleet upgrade` for one host (contract §11): the canonical artifact installed through the
 * host's controller by the generation machinery of §12 — or, with `resume`, an interrupted
 * transaction whose new runtime is healthy closed by acceptance again (issue 36). The CLI's
 * one-host verb and the fleet-wide sequencer (fleet-upgrade.ts) both call {@link upgradeHost}.
 * A failure is thrown as the `FleetError` that fixes its exit code (contract §7).
 */
import type { FleetRepo, RuntimeStatusResponse } from '@fleet/core';
import type { LoadedArtifact } from './artifact.js';

export interface UpgradeHostInput {
  readonly root: string;
  readonly host: string;
  readonly confirm: boolean;
  readonly acceptanceTimeoutMs: number;
  readonly timeoutMs: number;
  /** Close the host's interrupted transaction instead (`--resume`). */
  readonly resume?: boolean;
  /** Progress while the node works (stderr). */
  readonly onProgress?: (line: string) => void;
  /** A warning or a note for the operator (stderr). */
  readonly onNote?: (line: string) => void;
  /**
   * Read once by a fleet-wide run and shared by its hosts: the repository and the canonical
   * artifact (reading and checking a ~10 MB tarball per host would serialise the
   * hosts on the operator's one thread).
   */
  readonly shared?: { readonly repo: FleetRepo; readonly artifact: () => Promise<LoadedArtifact> };
}

export type UpgradeOutcome =
  'planned' | 'current' | 'accepted' | 'rolled-back' | 'manual-recovery-required' | 'failed';

export interface UpgradePlan {
  readonly host: string;
  readonly nodeId: string;
  readonly supervisor: string;
  readonly strategy: string;
  readonly from: { readonly version: string; readonly build: string | null };
  readonly to: {
    readonly version: string;
    readonly build: string;
    readonly commit: string | null;
    readonly file: string;
  };
}

export interface HostUpgraded extends UpgradePlan {
  readonly outcome: UpgradeOutcome;
  /** The human line: `node-01: 1.0.0 (…) -> 1.1.0 (…) under systemd-user`. */
  readonly describe: string;
  readonly confirmed?: boolean;
  readonly transaction?: string;
  readonly resumed?: boolean;
  readonly status?: RuntimeStatusResponse | null;
}

export async function upgradeHost(input: UpgradeHostInput): Promise<HostUpgraded> {
  const core = await import('@fleet/core');
  const { loadHostRuntime } = await import('./host.js');
  const { canonicalArtifact, dirtyWarning } = await import('./artifact.js');
  const note = input.onNote ?? (() => undefined);
  const progress = input.onProgress ?? (() => undefined);
  const host = await loadHostRuntime(input.root, input.host, {
    timeoutMs: input.timeoutMs,
    ...(input.shared ? { repo: input.shared.repo } : {}),
  });
  if (host.entry.upgrade?.strategy !== 'tarball') {
    throw new core.FleetError(
      'USAGE',
      `${input.host} has no recorded upgrade strategy (fleet.yaml hosts.${input.host}.upgrade: { strategy: tarball })`,
    );
  }
  const artifact = await (input.shared?.artifact() ??
    canonicalArtifact(input.root, host.repo.manifest));
  const dirty = dirtyWarning(artifact);
  if (dirty !== null) note(dirty);
  const target = core.targetExpectation({
    nodeId: host.nodeId,
    host: host.entry,
    artifact: artifact.identity,
    plugins: host.repo.manifest.plugins,
  });
  const identity = await host.client.identity();
  const plan: UpgradePlan = {
    host: input.host,
    nodeId: host.nodeId,
    supervisor: host.entry.supervisor,
    strategy: host.entry.upgrade.strategy,
    from: { version: identity.version, build: identity.build.sha256 },
    to: {
      version: artifact.identity.version,
      build: artifact.identity.sha256,
      commit: artifact.identity.commit,
      file: artifact.identity.file,
    },
  };
  const describe = `${input.host}: ${identity.version} (${identity.build.sha256?.slice(0, 12) ?? 'development build'}) -> ${artifact.identity.version} (${artifact.identity.sha256.slice(0, 12)}) under ${host.entry.supervisor}`;
  const { followableOnInterrupt } = await import('./interrupt.js');
  const { recordRuntimeVerb } = await import('./record.js');
  const { unfinished } = await import('./follow.js');

  if (input.resume === true) {
    const status = await host.client.runtimeStatus({ supervisor: host.entry.supervisor });
    const txn = status.transaction;
    if (txn === null || txn.lastStep === 'end' || status.next !== 'resume-acceptance') {
      throw new core.FleetError(
        'PRECONDITION_FAILED',
        `${input.host}: nothing to resume: ${txn === null ? 'no transaction is journaled' : txn.lastStep === 'end' ? `transaction ${txn.id} ended ${txn.outcome ?? ''}`.trim() : `transaction ${txn.id} is open at "${txn.lastStep}", and its status is ${status.state}, next ${status.next}`}`,
        {
          suggestions: [
            `fleet bootstrap status ${input.host}`,
            ...(status.next === 'rollback' || status.next === 'abort'
              ? [`fleet bootstrap rollback ${input.host} --confirm`]
              : []),
          ],
        },
      );
    }
    if (txn.target !== target.build.sha256) {
      throw new core.FleetError(
        'PRECONDITION_FAILED',
        `${input.host}: transaction ${txn.id} installs ${txn.target.slice(0, 12)}, not fleet.yaml's canonical ${target.build.sha256.slice(0, 12)}: resume it only against what it installs — roll it back (\`fleet bootstrap rollback ${input.host} --confirm\`) or make that build canonical again`,
      );
    }
    const resuming = `transaction ${txn.id} on ${input.host}, interrupted at "${txn.lastStep}" (${txn.prior?.slice(0, 12) ?? '(none)'} -> ${txn.target.slice(0, 12)})`;
    if (!input.confirm) {
      note(`would resume ${resuming}: acceptance again, then accepted or rolled back`);
      return { ...plan, describe, outcome: 'planned', confirmed: false, resumed: true };
    }
    progress(`resuming ${resuming}`);
    const { resumeThroughController } = await import('./apply.js');
    const resumed = await followableOnInterrupt(input.host, () =>
      resumeThroughController({
        client: host.client,
        supervisor: host.entry.supervisor,
        target,
        acceptanceTimeoutMs: input.acceptanceTimeoutMs,
        status,
        onProgress: progress,
      }),
    );
    await recordRuntimeVerb('upgrade --resume', input.host, resumed.transaction, resumed.verdict);
    if (!resumed.verdict.done) {
      throw await unfinished(
        input.host,
        resumed.transaction,
        resumed.status,
        resumed.runnerLog,
        resumed.runnerDied,
        resumed.answered,
      );
    }
    if (resumed.verdict.error) throw resumed.verdict.error;
    return {
      ...plan,
      describe,
      outcome: resumed.verdict.outcome,
      transaction: resumed.transaction,
      resumed: true,
      status: resumed.status,
    };
  }

  const { acceptRuntime } = await import('@fleet/controller');
  if (
    identity.build.sha256 === artifact.identity.sha256 &&
    acceptRuntime(target, identity).accepted
  ) {
    return { ...plan, describe, outcome: 'current' };
  }
  if (!input.confirm) return { ...plan, describe, outcome: 'planned', confirmed: false };
  const { applyThroughController } = await import('./apply.js');
  progress(`upgrading ${describe}`);
  const applied = await followableOnInterrupt(input.host, () =>
    applyThroughController({
      client: host.client,
      kind: 'upgrade',
      supervisor: host.entry.supervisor,
      planId: null,
      target,
      artifact,
      acceptanceTimeoutMs: input.acceptanceTimeoutMs,
      onProgress: progress,
      // Where fleet.yaml says the controller is, and its pin (issue 35): the upgraded
      // controller listens there, with the certificate the node keeps.
      listen: core.controllerListen(host.entry.controller),
      pinned: host.entry.tls?.fingerprint ?? null,
    }),
  );
  await recordRuntimeVerb('upgrade', input.host, applied.transaction, applied.verdict);
  if (!applied.verdict.done) {
    throw await unfinished(
      input.host,
      applied.transaction,
      applied.status,
      applied.runnerLog,
      applied.runnerDied,
      applied.answered,
    );
  }
  if (applied.verdict.error) throw applied.verdict.error;
  return {
    ...plan,
    describe,
    outcome: applied.verdict.outcome,
    transaction: applied.transaction,
    status: applied.status,
  };
}

/** The note for a host that already runs the canonical build (the one-host verb exits 3). */
export function currentNote(upgraded: HostUpgraded): string {
  return `${upgraded.host} already runs ${upgraded.to.version} (${upgraded.to.build.slice(0, 12)}) and passes acceptance: nothing to upgrade (name a newer build as canonicalVersion and in artifacts in fleet.yaml)`;
}

export type FleetHostOutcome =
  UpgradeOutcome | 'runner-died' | 'unreachable' | 'denied' | 'error' | 'skipped';

export interface FleetUpgradeHost {
  readonly host: string;
  readonly outcome: FleetHostOutcome;
  readonly exitCode: number;
  readonly canary: boolean;
  readonly transaction?: string;
  readonly from?: UpgradePlan['from'];
  readonly to?: UpgradePlan['to'];
  readonly error?: {
    readonly code: string;
    readonly message: string;
    readonly suggestions?: readonly string[];
  };
}

export const FLEET_UPGRADE_SCHEMA = 'fleet.upgrade/v1';

/** `fleet upgrade --all --json` (issue 36): one document, every host's outcome. */
export interface FleetUpgradeDocument {
  readonly schema: typeof FLEET_UPGRADE_SCHEMA;
  readonly generatedAt: string;
  readonly confirmed: boolean;
  readonly canary: string | null;
  readonly concurrency: number;
  readonly summary: Readonly<Record<FleetHostOutcome | 'hosts', number>>;
  /** The host whose failure stopped the run, or `null`. */
  readonly stoppedAt: string | null;
  readonly hosts: readonly FleetUpgradeHost[];
  readonly exitCode: number;
}

export interface UpgradeFleetInput extends Omit<UpgradeHostInput, 'host' | 'resume'> {
  /** The hosts selected (`--host` repeated), or every host of fleet.yaml (`--all`). */
  readonly hosts: readonly string[] | 'all';
  readonly canary?: string;
  readonly concurrency: number;
  /** Each host's line as it settles (stdout). */
  readonly onHost?: (host: FleetUpgradeHost) => void;
  /** A host's progress (stderr), prefixed with its name by the caller. */
  readonly onHostProgress?: (host: string, line: string) => void;
}

/** A host's failure as its outcome (pure). */
export function failureOutcome(code: string, exitCode: number): FleetHostOutcome {
  switch (code) {
    case 'ROLLED_BACK':
      return 'rolled-back';
    case 'RECOVERY_REQUIRED':
      return 'manual-recovery-required';
    case 'RUNNER_DIED':
      return 'runner-died';
    default:
      return exitCode === 5 ? 'unreachable' : exitCode === 4 ? 'denied' : 'failed';
  }
}

/**
 * The fleet-wide upgrade: the order and the sequencing of fleet-upgrade.ts over
 * {@link upgradeHost}. Without `confirm` every host is planned (nothing stops, nothing is sent).
 * With it the first host that is not accepted (or current) stops the run: hosts not started are
 * `skipped`. Exit: the most urgent of the hosts' codes (a host already current counts 0), 2
 * without `confirm`, 3 when every host was already current (nothing to upgrade).
 */
export async function upgradeFleet(input: UpgradeFleetInput): Promise<FleetUpgradeDocument> {
  const core = await import('@fleet/core');
  const { sequenceUpgrades, upgradeOrder } = await import('./fleet-upgrade.js');
  const { canonicalArtifact } = await import('./artifact.js');
  const repo = await core.loadRepo(input.root);
  // Read on the first host's demand and shared: a failure to read it is each host's error, as
  // when every host read it for itself.
  let artifact: Promise<LoadedArtifact> | undefined;
  const shared = {
    repo,
    artifact: () => (artifact ??= canonicalArtifact(input.root, repo.manifest)),
  };
  const fleetOrder = Object.keys(repo.manifest.hosts);
  for (const host of [
    ...(input.hosts === 'all' ? [] : input.hosts),
    ...(input.canary ? [input.canary] : []),
  ]) {
    core.hostEntry(repo, host); // UNKNOWN_HOST, exit 2, with the closest name
  }
  let order;
  try {
    order = upgradeOrder(fleetOrder, input.hosts, input.canary);
  } catch (error) {
    throw new core.FleetError('USAGE', (error as Error).message);
  }
  const settle = async (host: string) => {
    const canary = host === order.canary;
    let entry: FleetUpgradeHost;
    try {
      const done = await upgradeHost({
        ...input,
        host,
        shared,
        onProgress: (line) => input.onHostProgress?.(host, line),
        onNote: (line) => input.onHostProgress?.(host, line),
      });
      entry = {
        host,
        canary,
        outcome: done.outcome,
        exitCode: done.outcome === 'planned' ? core.ExitCode.usage : core.ExitCode.ok,
        ...(done.transaction === undefined ? {} : { transaction: done.transaction }),
        from: done.from,
        to: done.to,
      };
    } catch (error) {
      const failure = core.asFleetError(error);
      entry = {
        host,
        canary,
        outcome: failureOutcome(failure.code, failure.exitCode),
        exitCode: failure.exitCode,
        error: {
          code: failure.code,
          message: failure.message,
          ...(failure.suggestions?.length ? { suggestions: failure.suggestions } : {}),
        },
      };
    }
    return {
      host,
      // Planning never stops the run; upgrading stops at the first host not accepted or current.
      ok: !input.confirm || entry.outcome === 'accepted' || entry.outcome === 'current',
      exitCode: entry.exitCode,
      result: entry,
    };
  };
  const sequenced = await sequenceUpgrades(order, input.concurrency, settle, {
    onSettled: (settled) => input.onHost?.(settled.result),
  });
  const hosts: FleetUpgradeHost[] = sequenced.hosts.map((entry) => {
    if (entry.state === 'settled') return entry.result;
    const skipped: FleetUpgradeHost = {
      host: entry.host,
      canary: false,
      outcome: 'skipped',
      exitCode: core.ExitCode.ok,
      error: {
        code: 'SKIPPED',
        message: `not started: the run stopped at ${sequenced.stoppedAt ?? '?'}, which was not accepted`,
      },
    };
    input.onHost?.(skipped);
    return skipped;
  });
  const summary: Record<FleetHostOutcome | 'hosts', number> = {
    hosts: hosts.length,
    planned: 0,
    current: 0,
    accepted: 0,
    'rolled-back': 0,
    'manual-recovery-required': 0,
    failed: 0,
    'runner-died': 0,
    unreachable: 0,
    denied: 0,
    error: 0,
    skipped: 0,
  };
  for (const host of hosts) summary[host.outcome] += 1;
  const allCurrent = hosts.length > 0 && summary.current === hosts.length;
  return {
    schema: FLEET_UPGRADE_SCHEMA,
    generatedAt: new Date().toISOString(),
    confirmed: input.confirm,
    canary: order.canary,
    concurrency: input.concurrency,
    summary,
    stoppedAt: input.confirm ? sequenced.stoppedAt : null,
    hosts,
    exitCode: allCurrent
      ? core.ExitCode.conflict
      : core.mostUrgentExit(hosts.map((host) => host.exitCode)),
  };
}

/** One host's line of a fleet-wide upgrade (plain text). */
export function renderFleetUpgradeHost(host: FleetUpgradeHost): string {
  const what =
    host.from && host.to
      ? `${host.from.version} (${host.from.build?.slice(0, 12) ?? 'development build'}) -> ${host.to.version} (${host.to.build.slice(0, 12)})`
      : '';
  const parts = [
    host.host,
    host.outcome,
    ...(host.canary ? ['(canary)'] : []),
    ...(what ? [what] : []),
    ...(host.transaction ? [`transaction ${host.transaction}`] : []),
    ...(host.error
      ? [`${host.error.code === 'SKIPPED' ? '' : `${host.error.code}: `}${host.error.message}`]
      : []),
  ];
  return parts.join('  ');
}

/** The summary line of a fleet-wide upgrade. */
export function renderFleetUpgradeSummary(document: FleetUpgradeDocument): string {
  const counts = Object.entries(document.summary)
    .filter(([key, n]) => key !== 'hosts' && n > 0)
    .map(([key, n]) => `${n} ${key}`);
  const stopped = document.stoppedAt ? `; stopped at ${document.stoppedAt}` : '';
  return `${document.summary.hosts} host${document.summary.hosts === 1 ? '' : 's'}: ${counts.join(', ') || 'none'}${stopped}`;
}
