/**
 * `fleet upgrade` for one host (contract §11): the canonical artifact installed through the
 * host's controller by the generation machinery of §12 — or, with `resume`, an interrupted
 * transaction whose new runtime is healthy closed by acceptance again (issue 36). The CLI's
 * one-host verb and the fleet-wide sequencer (fleet-upgrade.ts) both call {@link upgradeHost}.
 * A failure is thrown as the `FleetError` that fixes its exit code (contract §7). What the verbs
 * take and answer, and its pure readings, are upgrade-model.ts.
 *
 * Its modules are imported at the top, the controller's included (`acceptRuntime`): every upgrade
 * that reaches its artifact loads the controller to read it anyway (packages/operator/README.md).
 */
import type { IdentityResponse, RuntimeExpectation, RuntimeStatusResponse } from '@fleet/core';
import { acceptRuntime } from '@fleet/controller';
import * as core from '@fleet/core';
import type { LoadedArtifact } from './artifact.js';
import type { ResumedRuntime } from './apply.js';
import type { HostRuntime } from './host.js';
import {
  failedEntry,
  fleetUpgradeDocument,
  skippedHost,
  upgradedEntry,
  type FleetUpgradeDocument,
  type FleetUpgradeHost,
  type HostUpgraded,
  type UpgradeFleetInput,
  type UpgradeHostInput,
  type UpgradeOutcome,
  type UpgradePlan,
} from './upgrade-model.js';
import { loadHostRuntime } from './host.js';
import { canonicalArtifact, dirtyWarning } from './artifact.js';
import { followableOnInterrupt } from './interrupt.js';
import { resumeThroughController, applyThroughController } from './apply.js';
import { recordRuntimeVerb } from './record.js';
import { unfinished } from './follow.js';
import { sequenceUpgrades, upgradeOrder } from './fleet-upgrade.js';

export * from './upgrade-model.js';

export async function upgradeHost(input: UpgradeHostInput): Promise<HostUpgraded> {
  const prepared = await prepareUpgrade(input);
  if (input.resume === true) return await resumeUpgrade(input, prepared);
  return await applyUpgrade(input, prepared);
}

/** One host's upgrade once read: what it runs, what it is to run, and the plan between. */
interface PreparedUpgrade {
  readonly host: HostRuntime;
  readonly artifact: LoadedArtifact;
  readonly target: RuntimeExpectation;
  readonly identity: IdentityResponse;
  readonly plan: UpgradePlan;
  readonly describe: string;
  readonly note: (line: string) => void;
  readonly progress: (line: string) => void;
}

/**
 * Reads the host, the canonical artifact and what the node runs; refuses a host without the
 * tarball upgrade strategy (`USAGE`). Notes a build from a dirty checkout.
 */
async function prepareUpgrade(input: UpgradeHostInput): Promise<PreparedUpgrade> {
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
  const plan = upgradePlan(input.host, host, identity, artifact, host.entry.upgrade.strategy);
  const describe = `${input.host}: ${identity.version} (${identity.build.sha256?.slice(0, 12) ?? 'development build'}) -> ${artifact.identity.version} (${artifact.identity.sha256.slice(0, 12)}) under ${host.entry.supervisor}`;
  return { host, artifact, target, identity, plan, describe, note, progress };
}

/** The plan: the host, what it runs and what it is to run (pure). */
function upgradePlan(
  name: string,
  host: Pick<HostRuntime, 'nodeId' | 'entry'>,
  identity: IdentityResponse,
  artifact: LoadedArtifact,
  strategy: string,
): UpgradePlan {
  return {
    host: name,
    nodeId: host.nodeId,
    supervisor: host.entry.supervisor,
    strategy,
    from: { version: identity.version, build: identity.build.sha256 },
    to: {
      version: artifact.identity.version,
      build: artifact.identity.sha256,
      commit: artifact.identity.commit,
      file: artifact.identity.file,
    },
  };
}

/** `--resume`: the host's interrupted transaction closed by acceptance again. */
async function resumeUpgrade(
  input: UpgradeHostInput,
  prepared: PreparedUpgrade,
): Promise<HostUpgraded> {
  const { host, target, plan, describe, progress } = prepared;
  const status = await host.client.runtimeStatus({ supervisor: host.entry.supervisor });
  const txn = resumableTransaction(input.host, status, target);
  const resuming = `transaction ${txn.id} on ${input.host}, interrupted at "${txn.lastStep}" (${txn.prior?.slice(0, 12) ?? '(none)'} -> ${txn.target.slice(0, 12)})`;
  if (!input.confirm) {
    prepared.note(`would resume ${resuming}: acceptance again, then accepted or rolled back`);
    return { ...plan, describe, outcome: 'planned', confirmed: false, resumed: true };
  }
  progress(`resuming ${resuming}`);
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
  return {
    ...plan,
    describe,
    outcome: await settledOutcome('upgrade --resume', input.host, resumed),
    transaction: resumed.transaction,
    resumed: true,
    status: resumed.status,
  };
}

type JournaledTransaction = NonNullable<RuntimeStatusResponse['transaction']>;

/**
 * The host's open transaction when `--resume` can close it: one is journaled, open, waiting for
 * acceptance again, and installs fleet.yaml's canonical build; else `PRECONDITION_FAILED`.
 */
function resumableTransaction(
  host: string,
  status: RuntimeStatusResponse,
  target: RuntimeExpectation,
): JournaledTransaction {
  const txn = status.transaction;
  if (txn === null || txn.lastStep === 'end' || status.next !== 'resume-acceptance') {
    throw new core.FleetError(
      'PRECONDITION_FAILED',
      `${host}: nothing to resume: ${txn === null ? 'no transaction is journaled' : txn.lastStep === 'end' ? `transaction ${txn.id} ended ${txn.outcome ?? ''}`.trim() : `transaction ${txn.id} is open at "${txn.lastStep}", and its status is ${status.state}, next ${status.next}`}`,
      {
        suggestions: [
          `fleet bootstrap status ${host}`,
          ...(status.next === 'rollback' || status.next === 'abort'
            ? [`fleet bootstrap rollback ${host} --confirm`]
            : []),
        ],
      },
    );
  }
  if (txn.target !== target.build.sha256) {
    throw new core.FleetError(
      'PRECONDITION_FAILED',
      `${host}: transaction ${txn.id} installs ${txn.target.slice(0, 12)}, not fleet.yaml's canonical ${target.build.sha256.slice(0, 12)}: resume it only against what it installs — roll it back (\`fleet bootstrap rollback ${host} --confirm\`) or make that build canonical again`,
    );
  }
  return txn;
}

/** The canonical build installed, unless the host already runs it and passes acceptance. */
async function applyUpgrade(
  input: UpgradeHostInput,
  prepared: PreparedUpgrade,
): Promise<HostUpgraded> {
  const { host, artifact, target, identity, plan, describe, progress } = prepared;
  if (
    identity.build.sha256 === artifact.identity.sha256 &&
    acceptRuntime(target, identity).accepted
  ) {
    return { ...plan, describe, outcome: 'current' };
  }
  if (!input.confirm) return { ...plan, describe, outcome: 'planned', confirmed: false };
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
  return {
    ...plan,
    describe,
    outcome: await settledOutcome('upgrade', input.host, applied),
    transaction: applied.transaction,
    status: applied.status,
  };
}

/**
 * Records the runtime verb in the operator's log, then its outcome — or throws: the error of a
 * transaction that was not followed to its end, or the one its verdict raises.
 */
async function settledOutcome(
  verb: string,
  host: string,
  run: ResumedRuntime,
): Promise<UpgradeOutcome> {
  await recordRuntimeVerb(verb, host, run.transaction, run.verdict);
  if (!run.verdict.done) {
    throw unfinished(
      host,
      run.transaction,
      run.status,
      run.runnerLog,
      run.runnerDied,
      run.answered,
    );
  }
  if (run.verdict.error) throw run.verdict.error;
  return run.verdict.outcome;
}

/**
 * The fleet-wide upgrade: the order and the sequencing of fleet-upgrade.ts over
 * {@link upgradeHost}. Without `confirm` every host is planned (nothing stops, nothing is sent).
 * With it the first host that is not accepted (or current) stops the run: hosts not started are
 * `skipped`. Exit: the most urgent of the hosts' codes (a host already current counts 0), 2
 * without `confirm`, 3 when every host was already current (nothing to upgrade).
 */
export async function upgradeFleet(input: UpgradeFleetInput): Promise<FleetUpgradeDocument> {
  const repo = await core.loadRepo(input.root);
  // Read on the first host's demand and shared: a failure to read it is each host's error, as
  // when every host read it for itself.
  let artifact: Promise<LoadedArtifact> | undefined;
  const shared = {
    repo,
    artifact: () => (artifact ??= canonicalArtifact(input.root, repo.manifest)),
  };
  for (const host of [
    ...(input.hosts === 'all' ? [] : input.hosts),
    ...(input.canary ? [input.canary] : []),
  ]) {
    core.hostEntry(repo, host); // UNKNOWN_HOST, exit 2, with the closest name
  }
  let order;
  try {
    order = upgradeOrder(Object.keys(repo.manifest.hosts), input.hosts, input.canary);
  } catch (error) {
    throw new core.FleetError('USAGE', (error as Error).message);
  }
  const { canary } = order;
  const sequenced = await sequenceUpgrades(
    order,
    input.concurrency,
    async (host: string) => {
      const entry = await upgradedHost({ ...input, host, shared }, host === canary);
      return {
        host,
        // Planning never stops the run; upgrading stops at the first host not accepted or current.
        ok: !input.confirm || entry.outcome === 'accepted' || entry.outcome === 'current',
        exitCode: entry.exitCode,
        result: entry,
      };
    },
    { onSettled: (settled) => input.onHost?.(settled.result) },
  );
  const hosts: FleetUpgradeHost[] = sequenced.hosts.map((entry) => {
    if (entry.state === 'settled') return entry.result;
    const skipped = skippedHost(entry.host, sequenced.stoppedAt);
    input.onHost?.(skipped);
    return skipped;
  });
  return fleetUpgradeDocument({
    confirmed: input.confirm,
    canary,
    concurrency: input.concurrency,
    stoppedAt: sequenced.stoppedAt,
    hosts,
  });
}

/** One host of a fleet-wide run upgraded, its failure as its outcome: it never throws. */
async function upgradedHost(
  input: UpgradeFleetInput & Pick<UpgradeHostInput, 'host' | 'shared'>,
  canary: boolean,
): Promise<FleetUpgradeHost> {
  const { host } = input;
  try {
    const done = await upgradeHost({
      ...input,
      onProgress: (line) => input.onHostProgress?.(host, line),
      onNote: (line) => input.onHostProgress?.(host, line),
    });
    return upgradedEntry(done, canary);
  } catch (error) {
    return failedEntry(host, canary, core.asFleetError(error));
  }
}
