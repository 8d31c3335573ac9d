/**
 * `fleet config install` (contract §8.4), the service: plans one host's domain from the same
 * assessment drift makes (the repository at HEAD, one snapshot request, the domain's derived layer
 * planned in the same request) and, when confirmed, turns the plan into a plan-bound install
 * (`plannedInstall`) and sends it through the install service `fleet apply` shares
 * (`installPlanned`). A refusal to turn the plan into an install (a hand change without `force`:
 * DIVERGED, MODIFIED, DELETED) is a verb the operator ran, so it goes into the operator's log here;
 * `installPlanned` logs everything after it.
 */
import type { DomainPlan, Receipt, Registry, RepoSource } from '@fleet/core';
import * as core from '@fleet/core';
import type { FleetContext } from './context.js';
import { loadFleetContext } from './context.js';
import { installPlanned } from './install.js';
import { readLiveThroughController, readSnapshotThroughController } from './live.js';

/** The plan and the receipt, for the command to print (pure). */
export { renderPlan, renderReceipt } from './render.js';

const VERB = 'config install';

export interface InstallDomainInput {
  readonly root: string;
  readonly registry: Registry;
  readonly host: string;
  readonly domain: string;
  /** Only these node paths (`~/…`); default: every file of the plan. */
  readonly files?: readonly string[];
  /** Really install; without it only the plan is made, and nothing is sent. */
  readonly confirm: boolean;
  /** Overwrite diverged and modified files, recreate deleted ones. */
  readonly force: boolean;
  readonly timeoutMs: number;
  /** The commit the repository was read at, as soon as it is known (before any host is asked). */
  readonly onSource?: (source: RepoSource) => Promise<void>;
  /** Progress while a coupled restart settles, and notes about an older node (stderr). */
  readonly onWait?: (line: string) => void;
}

export type DomainInstall =
  | { readonly plan: DomainPlan; readonly receipt: Receipt }
  | {
      readonly plan: DomainPlan;
      readonly confirmed: false;
      /** Why the install would be refused, or `undefined` when it would be sent. */
      readonly refusal: string | undefined;
    };

/** Plans, and with `confirm` installs; throws a refusal or failure (as a FleetError), logged. */
export async function installDomain(input: InstallDomainInput): Promise<DomainInstall> {
  const context = await loadFleetContext({
    root: input.root,
    registry: input.registry,
    domains: [input.domain],
    timeoutMs: input.timeoutMs,
  });
  await input.onSource?.(context.source);
  const plan = await planDomain(input, context);
  const selection = { ...(input.files ? { files: input.files } : {}), force: input.force };
  if (!input.confirm) {
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
    await recordRefusal(input, context, plan, core.asFleetError(error));
    throw error;
  }
  try {
    const receipt = await installPlanned({
      context,
      host: input.host,
      domain: input.domain,
      planned,
      verb: VERB,
      ...(input.onWait ? { onWait: input.onWait } : {}),
    });
    return { plan, receipt };
  } finally {
    context.close();
  }
}

/** The domain's plan on the host, from one assessment (history read once, one snapshot). */
async function planDomain(input: InstallDomainInput, context: FleetContext): Promise<DomainPlan> {
  const assessment = await core.prepareAssessment({
    repo: context.repo,
    git: context.git,
    source: context.source,
    domains: context.domains,
    domainFilter: [input.domain],
    readLive: readLiveThroughController(context),
    // The domain's derived layer (the router's volume) is planned too, in the same request.
    probers: await core.loadDomainProbers(input.registry, [...context.domains.keys()]),
    readSnapshot: readSnapshotThroughController(context),
  });
  const [plan] = await core.planHost(assessment, input.host, input.domain);
  if (!plan)
    throw new core.FleetError('UNKNOWN_DOMAIN', `no plan for ${input.domain} on ${input.host}`);
  return plan;
}

/** A refused install is a verb the operator ran: it goes into the operator's log too. */
async function recordRefusal(
  input: InstallDomainInput,
  context: FleetContext,
  plan: DomainPlan,
  failure: { readonly code: string; readonly exitCode: number; readonly message: string },
): Promise<void> {
  await core.recordOperatorVerb({
    verb: VERB,
    host: input.host,
    domain: input.domain,
    repoCommit: context.source.commit,
    paths: plan.files.map((file) => file.path),
    outcome: 'refused',
    code: failure.code,
    exitCode: failure.exitCode,
    detail: failure.message,
  });
}
