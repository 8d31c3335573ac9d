/**
 * `fleet apply` (contract §7), the service: one plan over hosts × domains, made from the same
 * assessment drift makes (history read and indexed once for the fleet, one snapshot request per
 * host), and with `--confirm` each host's installable files sent through the `config install`
 * service (`installPlanned`: plan-bound, compare-and-swap per file, coupled actions by node-policy
 * action id). Hosts are worked on concurrently with a bound; each host's result is handed to
 * `onHost` as soon as it settles, so a hung host holds back only its own line.
 *
 * A saved plan (`--plan`) is checked before anything is sent: the repository must still be at the
 * plan's commit (`PLAN_MISMATCH`), and every file of every host read again must still have the
 * live sha256 (and desired content) the plan was made against (`PRECONDITION_FAILED`); either is
 * exit 3 with nothing sent to any host. Then exactly the plan's files are installed, and the node
 * checks each one's sha256 once more.
 */
import type {
  ApplyDocument,
  ApplyDomainResult,
  ApplyHostPlan,
  ApplyHostResult,
  ApplyPlan,
  Assessment,
  DomainPlan,
  FleetErrorLike,
  HostOutcome,
} from '@fleet/core';
import * as core from '@fleet/core';
import type { FleetContext } from './context.js';
import { installPlanned } from './install.js';
import { readLiveThroughController, readSnapshotThroughController } from './live.js';

export const APPLY_VERB = 'apply';

export interface ApplyInput {
  readonly context: FleetContext;
  readonly hosts: readonly string[];
  readonly domainFilter?: readonly string[];
  readonly force: boolean;
  readonly confirm: boolean;
  /** The saved plan to install exactly (`--plan`); its hosts and `force` replace the flags. */
  readonly saved?: ApplyPlan;
  readonly planFile?: string;
  readonly concurrency: number;
  /** Each host's result, as it settles (streamed output, progress). */
  readonly onHost?: (result: ApplyHostResult) => void;
  /** Progress lines (a coupled restart settling), on stderr. */
  readonly onWait?: (line: string) => void;
}

interface HostPlanned {
  readonly plan: ApplyHostPlan;
  /** The domain plans behind it (the content to send), empty when the host was not read. */
  readonly domainPlans: readonly DomainPlan[];
}

function errorOf(error: FleetErrorLike) {
  return { code: error.code, message: error.message, exitCode: error.exitCode };
}

async function planOneHost(
  assessment: Assessment,
  host: string,
  force: boolean,
): Promise<HostPlanned> {
  try {
    const domainPlans = await core.planHost(assessment, host);
    return {
      plan: {
        host,
        status: 'planned',
        domains: domainPlans.map((plan) => core.applyDomainOf(plan, force)),
      },
      domainPlans,
    };
  } catch (error) {
    const failure = core.asFleetError(error);
    return {
      plan: { host, status: core.unreadHostStatus(failure), error: errorOf(failure), domains: [] },
      domainPlans: [],
    };
  }
}

/** A host that was not read: its result, nothing sent; its exit that of why (5, 4, …). */
function unreadResult(plan: ApplyHostPlan): ApplyHostResult {
  const exitCode = plan.error?.exitCode ?? 1;
  const outcome =
    plan.status === 'unreachable' ? 'unreachable' : plan.status === 'denied' ? 'denied' : 'failed';
  return {
    host: plan.host,
    outcome,
    exitCode,
    ...(plan.error ? { error: plan.error } : {}),
    domains: [],
  };
}

/** Installs one planned host's installable files, domain by domain (one operation each). */
async function installHost(
  input: ApplyInput,
  planned: HostPlanned,
  force: boolean,
): Promise<ApplyHostResult> {
  const domains: ApplyDomainResult[] = [];
  let lost: FleetErrorLike | undefined;
  for (const domain of planned.plan.domains) {
    const paths = core.filesToInstall(domain).map((file) => file.path);
    const refused = domain.files.filter(
      (f) => f.decision === 'refused' || f.decision === 'blocked',
    );
    if (refused.length > 0) {
      await core.recordOperatorVerb({
        verb: APPLY_VERB,
        host: planned.plan.host,
        domain: domain.domain,
        repoCommit: input.context.source.commit,
        paths: refused.map((file) => file.path),
        outcome: 'refused',
        code: null,
        exitCode: core.ExitCode.policy,
        detail: refused.map((file) => `${file.path}: ${file.state}`).join('; '),
      });
    }
    const domainPlan = planned.domainPlans.find((plan) => plan.domain === domain.domain);
    if (paths.length === 0 || !domainPlan) {
      domains.push(domain);
      continue;
    }
    if (lost) {
      // The host stopped answering: its later domains are not sent (the next apply reads it again).
      domains.push({ ...domain, error: errorOf(lost) });
      continue;
    }
    try {
      const receipt = await installPlanned({
        context: input.context,
        host: planned.plan.host,
        domain: domain.domain,
        planned: core.plannedInstall(domainPlan, { files: paths, force }),
        verb: APPLY_VERB,
        ...(input.onWait ? { onWait: input.onWait } : {}),
      });
      domains.push({ ...domain, receipt });
    } catch (error) {
      const failure = core.asFleetError(error);
      if (failure.exitCode === core.ExitCode.unreachable || failure.exitCode === core.ExitCode.auth)
        lost = failure;
      domains.push({ ...domain, error: errorOf(failure) });
    }
  }
  return hostResult(planned.plan.host, domains);
}

function hostResult(host: string, domains: readonly ApplyDomainResult[]): ApplyHostResult {
  const exitCode = core.mostUrgentExit([
    core.hostExitCode(domains),
    ...domains.flatMap((domain) => (domain.error ? [domain.error.exitCode] : [])),
  ]);
  const receipts = domains.flatMap((domain) => (domain.receipt ? [domain.receipt] : []));
  const outcome: ApplyHostResult['outcome'] =
    exitCode === core.ExitCode.unreachable
      ? 'unreachable'
      : exitCode === core.ExitCode.auth
        ? 'denied'
        : exitCode === core.ExitCode.policy
          ? 'refused'
          : exitCode !== 0
            ? 'failed'
            : receipts.length === 0
              ? 'current'
              : receipts.some((receipt) => receipt.outcome === 'installed')
                ? 'installed'
                : 'unchanged';
  return { host, outcome, exitCode, domains: [...domains] };
}

/** The plan of a host without `--confirm`: what a confirmed run would do, nothing sent. */
function plannedResult(planned: HostPlanned): ApplyHostResult {
  if (planned.plan.status !== 'planned') return unreadResult(planned.plan);
  return {
    host: planned.plan.host,
    outcome: 'planned',
    exitCode: core.hostExitCode(planned.plan.domains),
    domains: planned.plan.domains,
  };
}

/** The plan to save (`--out`). */
export function savedPlan(document: ApplyDocument, plans: readonly ApplyHostPlan[]): ApplyPlan {
  return {
    schema: 'fleet.apply-plan/v1',
    createdAt: document.generatedAt,
    repoCommit: document.repoCommit,
    force: document.force,
    hosts: [...plans],
  };
}

export interface ApplyRun {
  readonly document: ApplyDocument;
  /** Every host's plan (what `--out` saves). */
  readonly plans: readonly ApplyHostPlan[];
}

/** What planning and installing every host share, once the assessment is made. */
interface ApplyState {
  readonly input: ApplyInput;
  readonly assessment: Assessment;
  readonly hosts: readonly string[];
  readonly force: boolean;
  /** Hands a host's result to `onHost` as it settles, and returns it. */
  readonly settle: (result: ApplyHostResult) => ApplyHostResult;
}

interface HostsApplied {
  readonly plans: readonly ApplyHostPlan[];
  readonly results: ApplyHostResult[];
}

export async function runApply(input: ApplyInput): Promise<ApplyRun> {
  const { context } = input;
  const saved = input.saved;
  const force = saved ? saved.force : input.force;
  if (saved && saved.repoCommit !== context.source.commit) {
    throw new core.FleetError(
      'PLAN_MISMATCH',
      `the saved plan was made at commit ${saved.repoCommit.slice(0, 12)}, the repository is at ${context.source.commit.slice(0, 12)}: nothing was sent (make a new plan)`,
    );
  }
  const hosts = saved ? saved.hosts.map((host) => host.host) : input.hosts;
  for (const host of hosts) core.hostEntry(context.repo, host); // UNKNOWN_HOST before any work
  const assessment = await core.prepareAssessment({
    repo: context.repo,
    git: context.git,
    source: context.source,
    domains: context.domains,
    ...(input.domainFilter ? { domainFilter: input.domainFilter } : {}),
    readLive: readLiveThroughController(context),
    // Each domain's derived layer (the router's volume) is planned too, in the same request.
    probers: await core.loadDomainProbers(context.registry, [...context.domains.keys()]),
    readSnapshot: readSnapshotThroughController(context),
  });
  const settle = (result: ApplyHostResult): ApplyHostResult => {
    input.onHost?.(result);
    return result;
  };
  const state: ApplyState = { input, assessment, hosts, force, settle };
  const { plans, results } = saved ? await applySaved(state, saved) : await applyFresh(state);
  const confirmed = input.confirm;
  const document: ApplyDocument = {
    schema: core.APPLY_SCHEMA,
    generatedAt: new Date().toISOString(),
    repoCommit: context.source.commit,
    confirmed,
    force,
    ...(input.planFile ? { planFile: input.planFile } : {}),
    summary: core.applySummary(results),
    hosts: results,
    exitCode: confirmed
      ? core.mostUrgentExit(results.map((result) => result.exitCode))
      : core.ExitCode.usage,
  };
  return { document, plans };
}

/** A host whose work threw past its own handling: failed, with that error. */
function failedHost(state: ApplyState, outcome: HostOutcome<ApplyHostResult>): ApplyHostResult {
  return outcome.ok
    ? outcome.value
    : state.settle({
        host: outcome.host,
        outcome: 'failed',
        exitCode: outcome.error.exitCode,
        error: errorOf(outcome.error),
        domains: [],
      });
}

/** Without a saved plan: each host planned, and with `confirm` installed, as soon as it is read. */
async function applyFresh(state: ApplyState): Promise<HostsApplied> {
  const { input, assessment, force, settle } = state;
  const plans: ApplyHostPlan[] = [];
  const outcomes = await core.forEachHost(
    state.hosts,
    async (host) => {
      const planned = await planOneHost(assessment, host, force);
      plans.push(planned.plan);
      if (!input.confirm) return settle(plannedResult(planned));
      if (planned.plan.status !== 'planned') return settle(unreadResult(planned.plan));
      return settle(await installHost(input, planned, force));
    },
    { concurrency: input.concurrency },
  );
  const results = outcomes.map((outcome) => failedHost(state, outcome));
  const order = new Map(state.hosts.map((host, index) => [host, index]));
  plans.sort((a, b) => (order.get(a.host) ?? 0) - (order.get(b.host) ?? 0));
  return { plans, results };
}

/**
 * A saved plan: every planned host read again before anything is sent to any of them (a file
 * that moved is PRECONDITION_FAILED, nothing sent), then exactly the plan's decisions installed.
 */
async function applySaved(state: ApplyState, saved: ApplyPlan): Promise<HostsApplied> {
  const { input, assessment, force, settle } = state;
  const options = { concurrency: input.concurrency };
  const again = await core.forEachHost(
    saved.hosts.filter((host) => host.status === 'planned').map((host) => host.host),
    (host) => planOneHost(assessment, host, force),
    options,
  );
  const now = new Map(again.flatMap((o) => (o.ok ? [[o.host, o.value] as const] : [])));
  const moves = saved.hosts.flatMap((host) => {
    const current = now.get(host.host);
    if (host.status !== 'planned' || !current || current.plan.status !== 'planned') return [];
    return core.planMoves(host, current.plan);
  });
  if (moves.length > 0) {
    throw new core.FleetError(
      'PRECONDITION_FAILED',
      `the saved plan no longer holds: ${moves.length} file${moves.length === 1 ? '' : 's'} moved since it was made (${moves[0]?.file}: ${moves[0]?.message}); nothing was sent (make a new plan)`,
      { problems: moves },
    );
  }
  const outcomes = await core.forEachHost(
    state.hosts,
    async (host) => {
      const savedHost = saved.hosts.find((h) => h.host === host) as ApplyHostPlan;
      const current = now.get(host);
      // A host not read when the plan was made is not installed now either.
      if (savedHost.status !== 'planned') return settle(unreadResult(savedHost));
      if (!current || current.plan.status !== 'planned')
        return settle(unreadResult(current?.plan ?? savedHost));
      if (!input.confirm) return settle(plannedResult({ plan: savedHost, domainPlans: [] }));
      // Exactly the saved plan's decisions, with the content derived again (checked equal).
      return settle(
        await installHost(input, { plan: savedHost, domainPlans: current.domainPlans }, force),
      );
    },
    options,
  );
  return { plans: saved.hosts, results: outcomes.map((outcome) => failedHost(state, outcome)) };
}
