/**
 * The reconcile over the fleet (contract §10.3), built on the operator engine of `fleet drift` and
 * `fleet config install`: the canonical history is read and indexed once (`prepareAssessment`),
 * each host is read in one snapshot request and classified exactly as drift classifies it
 * (`assessHost`: history-aware, so a host left several releases behind is `stale`, not diverged),
 * and each host's healable targets are installed through the controller's install — one
 * operation per host, each file's expected sha256 the one the snapshot showed (`plannedInstall`
 * on the host's plan, as `config install` does).
 *
 * A host with a hand-changed target (`diverged`, `modified`) or a removed one (`deleted`) still
 * gets its other, healable targets written: they are safe on their own (the field report's
 * reconciler healed per file), and that one is never touched — with --confirm or unattended
 * alike. The host's state stays the worst of its targets — drift remains — until someone adopts,
 * installs with --force, or recreates.
 *
 * The transport (`install`) and the operator log (`record`) are parameters, so the engine is
 * tested without a network; the command passes the controller client and core's operator log.
 */
// The operator's services (a plugin's own operator-side command): core's main entry, not the
// plugin API (src/plugin.ts says why).
import {
  assessHost,
  buildDomainPlan,
  forEachHost,
  plannedInstall,
  type AssessedFile,
  type Assessment,
  type DomainRuntime,
  type OperatorVerb,
} from '@fleet/core';
import {
  isFleetError,
  type FleetErrorLike,
  type InstallRequest,
  type Receipt,
} from '@fleet/core/plugin';
import {
  healable,
  plannedState,
  worstState,
  type DriftState,
  type ReconcileHost,
  type ReconcileMode,
  type ReconcileTarget,
} from './model.js';

export const RECONCILE_VERB = 'harness reconcile';

/** Codes that mean the host could not be reached (drift's `unreachable`). */
const UNREACHABLE = new Set(['HOST_UNREACHABLE', 'REQUEST_TIMEOUT']);

export type InstallCall = (host: string, request: InstallRequest) => Promise<Receipt>;

export interface ReconcileInput {
  /** Prepared by `prepareAssessment` with this domain (the history read once for the fleet). */
  readonly assessment: Assessment;
  readonly runtime: DomainRuntime;
  readonly hosts: readonly string[];
  readonly mode: ReconcileMode;
  /** The host variables the domain's install needs (declared ones only). */
  readonly parameters: (host: string) => Record<string, string>;
  readonly install: InstallCall;
  /** Appends to the operator log (core's `recordOperatorVerb`). */
  readonly record: (entry: OperatorVerb) => Promise<void>;
  readonly newOperationId: () => string;
  readonly concurrency?: number;
  readonly onHost?: (host: ReconcileHost) => void;
}

function targetOf(file: AssessedFile): ReconcileTarget {
  const { item } = file.assessment;
  const drift: DriftState = item.state;
  return {
    path: file.target.path,
    state: plannedState(drift),
    localLines: item.localLines ?? 0,
    drift,
    ...(item.detail === undefined || drift === 'current' ? {} : { detail: item.detail }),
  };
}

function describe(error: FleetErrorLike): string {
  return `${error.code}: ${error.message}`;
}

function offline(
  host: string,
  error: FleetErrorLike,
  targets: readonly ReconcileTarget[] = [],
): ReconcileHost {
  return { host, state: 'offline_pending', targets, detail: describe(error) };
}

/** The targets after an install, from the receipt's per-file states. */
function afterReceipt(
  targets: readonly ReconcileTarget[],
  installed: ReadonlySet<string>,
  receipt: Receipt,
): ReconcileTarget[] {
  const files = new Map(receipt.files.map((file) => [file.path, file]));
  const ok = receipt.outcome !== 'rolled-back' && receipt.verified;
  return targets.map((target) => {
    if (!installed.has(target.path)) return target;
    const file = files.get(target.path);
    if (!ok) {
      const why = receipt.error
        ? `${receipt.error.code}: ${receipt.error.message}`
        : 'the install could not be verified';
      return {
        ...target,
        state: 'error',
        detail: `${receipt.outcome}: ${why} (operation ${receipt.operationId})`,
      };
    }
    if (file?.state === 'written')
      return { ...target, state: 'updated', detail: `written (operation ${receipt.operationId})` };
    // `unchanged`: the node found the content already equal (nothing written).
    return {
      ...target,
      state: 'current',
      detail: `already current (operation ${receipt.operationId})`,
    };
  });
}

async function reconcileHost(input: ReconcileInput, host: string): Promise<ReconcileHost> {
  const domain = input.runtime.declaration.domain;
  let assessed: AssessedFile[];
  try {
    assessed = (await assessHost(input.assessment, host)).filter(
      (file) => file.target.domain === domain,
    );
  } catch (error) {
    if (isFleetError(error) && UNREACHABLE.has(error.code)) return offline(host, error);
    throw error;
  }
  const targets = assessed.map(targetOf);
  const heal = assessed.filter((file) => healable(file.assessment.item.state));
  if (input.mode === 'dry-run' || heal.length === 0) {
    return { host, state: worstState(targets.map((t) => t.state)), targets };
  }
  return healHost(input, host, assessed, heal, targets);
}

/** One host's install as the operator log and the result name it. */
interface HostInstall {
  readonly input: ReconcileInput;
  readonly host: string;
  readonly domain: string;
  /** The commit everything was read and rendered at. */
  readonly repoCommit: Assessment['snapshot']['commit'];
  readonly operationId: string;
  readonly paths: string[];
  /** The operator log's detail starts with it: `unattended; ` or nothing. */
  readonly tag: string;
  /** The host's targets as assessed, before the install. */
  readonly targets: readonly ReconcileTarget[];
}

/** Installs the host's healable targets (`heal`) in one operation and says what came of it. */
async function healHost(
  input: ReconcileInput,
  host: string,
  assessed: AssessedFile[],
  heal: readonly AssessedFile[],
  targets: readonly ReconcileTarget[],
): Promise<ReconcileHost> {
  // Only stale and missing targets are chosen, so core's policy (hand changes refused without
  // --force, unsupported and error refused) never has to refuse: such a target is simply not
  // part of the request.
  const declaration = input.runtime.declaration;
  const domain = declaration.domain;
  // The commit everything was read and rendered at: named by the request (so by the receipt and
  // the node's audit record) and by the operator log's entry (contract §8.4, issue 36).
  const repoCommit = input.assessment.snapshot.commit;
  const plan = buildDomainPlan({
    host,
    domain,
    repoCommit,
    actions: declaration.coupling.kind === 'process' ? declaration.coupling.actions : [],
    assessed,
  });
  const planned = plannedInstall(plan, { files: heal.map((file) => file.target.path) });
  const operationId = input.newOperationId();
  const unattended = input.mode === 'unattended';
  const install: HostInstall = {
    input,
    host,
    domain,
    repoCommit,
    operationId,
    paths: planned.files.map((file) => file.path),
    tag: unattended ? 'unattended; ' : '',
    targets,
  };
  let receipt: Receipt;
  try {
    receipt = await input.install(host, {
      operationId,
      domain,
      files: planned.files.map((file) => ({ ...file })),
      parameters: input.parameters(host),
      ...(unattended ? { unattended: true } : {}),
      repoCommit,
    });
  } catch (error) {
    return installFailed(install, error);
  }
  return installDone(install, receipt);
}

/** The install request itself failed: logged, and the host offline or its targets in error. */
async function installFailed(install: HostInstall, error: unknown): Promise<ReconcileHost> {
  const { input, host, operationId, paths } = install;
  const failure: FleetErrorLike = isFleetError(error)
    ? error
    : {
        code: 'INTERNAL',
        message: error instanceof Error ? error.message : String(error),
        exitCode: 1,
      };
  const lost = failure.code === 'HOST_UNREACHABLE';
  await input.record({
    verb: RECONCILE_VERB,
    host,
    operationId,
    domain: install.domain,
    repoCommit: install.repoCommit,
    paths,
    outcome: lost ? 'unreachable' : 'failed',
    code: failure.code,
    exitCode: failure.exitCode,
    detail: `${install.tag}${failure.message}`,
  });
  if (lost) {
    // Connection refused, cut or timed out: the next run reads the host again and converges
    // whatever this operation did (an install is idempotent).
    return {
      ...offline(host, failure, install.targets),
      operationId,
      detail: `${describe(failure)} (operation ${operationId}; its outcome is checked by the next run)`,
    };
  }
  const targets: ReconcileTarget[] = install.targets.map((target) =>
    paths.includes(target.path)
      ? {
          ...target,
          state: 'error',
          detail: `install refused: ${describe(failure)} (operation ${operationId})`,
        }
      : target,
  );
  return {
    host,
    state: worstState(targets.map((t) => t.state)),
    targets,
    operationId,
    detail: describe(failure),
    ...(failure.exitCode === 6 ? { verificationFailed: true } : {}),
    ...(failure.exitCode === 4 ? { denied: true } : {}),
  };
}

/** The node answered with a receipt: logged, and each installed target's state from it. */
async function installDone(install: HostInstall, receipt: Receipt): Promise<ReconcileHost> {
  const { input, host, operationId, paths } = install;
  const verified = receipt.outcome !== 'rolled-back' && receipt.verified;
  await input.record({
    verb: RECONCILE_VERB,
    host,
    operationId,
    domain: install.domain,
    repoCommit: install.repoCommit,
    paths,
    outcome: !verified ? 'failed' : receipt.outcome === 'unchanged' ? 'unchanged' : 'ok',
    code: receipt.error?.code ?? null,
    exitCode: verified ? 0 : 6,
    detail: `${install.tag}${receipt.outcome}, verified: ${receipt.verified}`,
  });
  const targets = afterReceipt(install.targets, new Set(paths), receipt);
  return {
    host,
    state: worstState(targets.map((t) => t.state)),
    targets,
    operationId,
    ...(verified
      ? {}
      : {
          verificationFailed: true,
          detail: receipt.error
            ? `${receipt.error.code}: ${receipt.error.message}`
            : 'not verified',
        }),
  };
}

/** Every host, concurrently with a bound; one host's failure never hides the others. */
export async function reconcileHosts(input: ReconcileInput): Promise<ReconcileHost[]> {
  const outcomes = await forEachHost(input.hosts, (host) => reconcileHost(input, host), {
    ...(input.concurrency === undefined ? {} : { concurrency: input.concurrency }),
    onSettled: (outcome) => {
      if (outcome.ok) input.onHost?.(outcome.value);
    },
  });
  return outcomes.map((outcome) => {
    if (outcome.ok) return outcome.value;
    const failed: ReconcileHost = {
      host: outcome.host,
      state: UNREACHABLE.has(outcome.error.code) ? 'offline_pending' : 'error',
      targets: [],
      detail: describe(outcome.error),
      ...(outcome.error.exitCode === 4 ? { denied: true } : {}),
    };
    input.onHost?.(failed);
    return failed;
  });
}
