/**
 * `fleet config install` as one service (contract §7, §8.4): load the repository at HEAD, plan
 * one host's domain against what its controller reads live, and — only when confirmed — send the
 * plan-bound install (`installPlanned`). A selection the plan refuses (a hand change without
 * `force`) is recorded in the operator's log as refused, as every verb the operator ran is. The
 * options name what to do, never a flag: the command parses, calls this, prints.
 */
import * as core from '@fleet/core';
import type { DomainPlan, Receipt, Registry, RepoSource } from '@fleet/core';
import { loadFleetContext } from './context.js';
import { installPlanned } from './install.js';
import { readLiveThroughController, readSnapshotThroughController } from './live.js';

export interface ConfigInstallOptions {
  readonly root: string;
  readonly registry: Registry;
  readonly host: string;
  readonly domain: string;
  /** Only these node paths (`~/`-relative); default: every file of the plan. */
  readonly files?: readonly string[];
  /** Overwrite diverged and modified files, recreate deleted ones. */
  readonly force: boolean;
  /** False: plan only, send nothing (the answer says whether the install would be refused). */
  readonly confirm: boolean;
  readonly timeoutMs: number;
  /** The commit the repository was read at, as soon as it is known (before the plan). */
  readonly onSource?: (source: RepoSource) => Promise<void>;
  /** Progress while a coupled restart settles, and notes about the node (stderr). */
  readonly onWait?: (line: string) => void;
}

export type ConfigInstallResult =
  | {
      readonly plan: DomainPlan;
      readonly confirmed: false;
      /** Why the install would be refused; undefined when it would be sent. */
      readonly refusal: string | undefined;
    }
  | { readonly plan: DomainPlan; readonly confirmed: true; readonly receipt: Receipt };

/** Plans and (confirmed) installs one host's domain; throws a refusal as a FleetError. */
export async function configInstall(options: ConfigInstallOptions): Promise<ConfigInstallResult> {
  const { host, domain } = options;
  const context = await loadFleetContext({
    root: options.root,
    registry: options.registry,
    domains: [domain],
    timeoutMs: options.timeoutMs,
  });
  await options.onSource?.(context.source);
  const assessment = await core.prepareAssessment({
    repo: context.repo,
    git: context.git,
    source: context.source,
    domains: context.domains,
    domainFilter: [domain],
    readLive: readLiveThroughController(context),
    // The domain's derived layer (the router's volume) is planned too, in the same request.
    probers: await core.loadDomainProbers(options.registry, [...context.domains.keys()]),
    readSnapshot: readSnapshotThroughController(context),
  });
  const [plan] = await core.planHost(assessment, host, domain);
  if (!plan) throw new core.FleetError('UNKNOWN_DOMAIN', `no plan for ${domain} on ${host}`);
  const selection = {
    ...(options.files ? { files: [...options.files] } : {}),
    force: options.force,
  };
  if (!options.confirm) {
    // The plan is the answer: nothing sent (contract §7).
    let refusal: string | undefined;
    try {
      core.plannedInstall(plan, selection);
    } catch (error) {
      refusal = core.asFleetError(error).message;
    }
    return { plan, confirmed: false, refusal };
  }
  let planned;
  try {
    planned = core.plannedInstall(plan, selection);
  } catch (error) {
    // A refusal is a verb the operator ran: it goes into the operator's log too.
    const failure = core.asFleetError(error);
    await core.recordOperatorVerb({
      verb: 'config install',
      host,
      domain,
      repoCommit: context.source.commit,
      paths: plan.files.map((file) => file.path),
      outcome: 'refused',
      code: failure.code,
      exitCode: failure.exitCode,
      detail: failure.message,
    });
    throw error;
  }
  try {
    const receipt = await installPlanned({
      context,
      host,
      domain,
      planned,
      verb: 'config install',
      ...(options.onWait ? { onWait: options.onWait } : {}),
    });
    return { plan, confirmed: true, receipt };
  } finally {
    context.close();
  }
}
