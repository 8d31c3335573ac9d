/**
 * The transport-identity installer (contract §6, §8.4, §10.2). Coupling (fail closed): the identity
 * file's `expected_node` and the controller's `--node-id` must agree, or the node refuses traffic
 * (the controller will not start); so writing the file, recording the flag with the controller's
 * supervisor, restarting the controller and checking the restarted controller's id are one
 * operation.
 *
 * Operator half (pure): the file is managed whole; `check` requires YAML whose `expected_node` is
 * a valid node id.
 *
 * Node half:
 * 1. refuse before anything is written: a request that is not exactly the identity file, content
 *    without a valid `expected_node`, an `expected_node` that is not the host's `node_id` (the
 *    request's parameter), a node-id change on a controller with no supervisor to restart it;
 * 2. write the file through the controller's `SafeFileWriter` (compare and swap, backup, atomic
 *    durable replace) and read it back;
 * 3. the same id as the running controller's: nothing to restart;
 * 4. a new id, with a supervisor that restarts *another* process: `switchNodeId` in-process —
 *    record, restart, check the reported id; on failure restore the file, record the old id,
 *    restart again, and fail the install (`VERIFICATION_FAILED`, or `RECOVERY_REQUIRED` when even
 *    the rollback restart failed): the receipt says rolled back, exit 6;
 * 5. a new id, with a supervisor that replaces the answering controller (a systemd user unit, a
 *    Windows scheduled task, the lab supervisor): the answer goes first — `restart pending` — and
 *    the switch runs in a process of its own, started after the answer outside what the restart
 *    ends (the supervisor's `switchFromOutside`); the controller that comes up settles the
 *    journaled operation (verified, or the file restored: rolled back) and the operator polls.
 *
 * The supervisor is the one the node recorded when its controller was installed
 * (`ctx.controllerSupervisor`, contract §12), never one a request names.
 */
import {
  FleetError,
  oneFileRequest,
  resolveSecrets,
  restoreWritten,
  writeVerified,
  type ActionOutcome,
  type ControllerSupervisor,
  type Installer,
  type ManagedFile,
  type NodeContext,
  type NodeInstallRequest,
  type NodeInstallResult,
  type Problem,
  type ReplaceResult,
  type SafeFileWriter,
} from '@fleet/core/plugin';
import { transportIdentityDomain } from './domain.js';
import { parseIdentity } from './identity-file.js';
import {
  recordedSupervisor,
  switchNodeId,
  type SwitchOutcome,
  type SwitchPlan,
} from './supervisor.js';

const DOMAIN = transportIdentityDomain.domain;
const IDENTITY = transportIdentityDomain.files[0];

export interface TransportIdentityOptions {
  /**
   * The supervisor of the controller the node half runs in. Default: the one the node recorded
   * (`ctx.controllerSupervisor()`), else none — a node-id change is then refused, nothing written.
   */
  readonly supervisor?: (ctx: NodeContext) => Promise<ControllerSupervisor | null>;
  /**
   * Starts the switch outside this process, for a supervisor that replaces it (called after the
   * answer is sent, must not wait for the switch). Default: the supervisor's `switchFromOutside`.
   */
  readonly launch?: (
    plan: SwitchPlan & { readonly operationId: string },
    supervisor: ControllerSupervisor,
    ctx: NodeContext,
  ) => void | Promise<void>;
}

function check(file: ManagedFile, content: string): readonly Problem[] {
  const parsed = parseIdentity(content, `domains/${DOMAIN}/${file.canonical}`);
  return parsed.ok ? [] : parsed.problems;
}

/** The supervisor's own out-of-process switch (checked to exist before anything is written). */
async function defaultLaunch(
  plan: SwitchPlan & { readonly operationId: string },
  supervisor: ControllerSupervisor,
): Promise<void> {
  await supervisor.switchFromOutside?.(plan);
}

const action = (kind: string, status: ActionOutcome['status'], detail: string): ActionOutcome => ({
  kind,
  status,
  detail,
});

/** What the refusals of step 1 leave to install: the resolved text, the ids, the supervisor. */
interface Accepted {
  readonly text: string;
  readonly from: string;
  readonly to: string;
  /** Null when the id does not change (nothing to restart). */
  readonly supervisor: ControllerSupervisor | null;
}

/** 1. Every refusal before the first write. */
async function accept(
  ctx: NodeContext,
  request: NodeInstallRequest,
  file: { readonly content: string; readonly path: string },
  supervisorOf: (ctx: NodeContext) => Promise<ControllerSupervisor | null>,
  launchGiven: boolean,
): Promise<Accepted> {
  const text = resolveSecrets(file.content, await ctx.secrets(), file.path);
  const parsed = parseIdentity(text, file.path);
  if (!parsed.ok) {
    const [first] = parsed.problems;
    throw new FleetError(
      'FORMAT_UNSUPPORTED',
      `${file.path}${first?.line ? `:${first.line}` : ''}: ${first?.message ?? 'invalid'}; nothing written`,
      { problems: parsed.problems },
    );
  }
  const to = parsed.expectedNode;
  const from = ctx.nodeId;
  const repoNodeId = request.parameters['node_id'];
  if (repoNodeId !== undefined && repoNodeId !== to) {
    throw new FleetError(
      'BAD_REQUEST',
      `${file.path}: expected_node ${to} is not the host's node_id ${repoNodeId}; nothing written (the identity file must name the node the repository names)`,
    );
  }
  const change = to !== from;
  const supervisor = change ? await supervisorOf(ctx) : null;
  if (change && supervisor === null) {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `${DOMAIN}: changing --node-id ${from} to ${to} needs the controller's supervisor, and this node records none fleet can drive (~/.local/state/fleet/supervisor.json, written when a bootstrap adapter or fleet lab up installs the controller); nothing written`,
    );
  }
  if (
    supervisor !== null &&
    supervisor.replacesCaller &&
    !launchGiven &&
    supervisor.switchFromOutside === undefined
  ) {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `${DOMAIN}: the ${supervisor.kind} supervisor restarts this very controller but cannot run the switch from outside it; nothing written`,
    );
  }
  return { text, from, to, supervisor };
}

/** 3. The running controller already has the id: nothing to restart. */
function unchangedActions(to: string): ActionOutcome[] {
  return [
    action('update-supervisor-flag', 'skipped', `--node-id is already ${to}`),
    action(
      'restart-controller',
      'skipped',
      `the running controller already runs with --node-id ${to}`,
    ),
    action('verify-node-id', 'ok', `the running controller reports ${to}, as expected_node says`),
  ];
}

/** 5. The switch runs from outside after the answer: every step still to come. */
function pendingActions(from: string, to: string, kind: string): ActionOutcome[] {
  return [
    action(
      'update-supervisor-flag',
      'pending',
      `record --node-id ${to} with the ${kind} supervisor (was ${from})`,
    ),
    action(
      'restart-controller',
      'pending',
      `restart the controller through the ${kind} supervisor`,
    ),
    action('verify-node-id', 'pending', `the restarted controller must run with --node-id ${to}`),
  ];
}

/** 4. The in-process switch succeeded. */
function switchedActions(
  from: string,
  to: string,
  kind: string,
  outcome: SwitchOutcome,
): ActionOutcome[] {
  return [
    action(
      'update-supervisor-flag',
      'ok',
      `recorded --node-id ${to} with the ${kind} supervisor (was ${from})`,
    ),
    action('restart-controller', 'ok', outcome.restart?.detail ?? 'restarted'),
    action('verify-node-id', 'ok', `the restarted controller runs with --node-id ${to}`),
  ];
}

/**
 * 4. The in-process switch failed (the file already restored): VERIFICATION_FAILED when the old
 * id runs again, RECOVERY_REQUIRED when even the rollback restart failed; the actions say which.
 */
function failedSwitchError(from: string, to: string, outcome: SwitchOutcome): FleetError {
  const actions = [
    action('update-supervisor-flag', 'rolled-back', `--node-id ${from} recorded again`),
    action('restart-controller', 'failed', outcome.error ?? 'the restart failed'),
    action(
      'restart-controller',
      outcome.rolledBack ? 'ok' : 'failed',
      outcome.rolledBack
        ? `restarted again with --node-id ${from} and the restored identity file`
        : `the rollback restart failed too: ${outcome.rollbackError ?? 'unknown'}`,
    ),
    action('verify-node-id', 'failed', `the controller does not run with --node-id ${to}`),
  ];
  return outcome.rolledBack
    ? new FleetError(
        'VERIFICATION_FAILED',
        `${outcome.error}; the identity file was restored and the controller restarted with --node-id ${from}`,
        { actions },
      )
    : new FleetError(
        'RECOVERY_REQUIRED',
        `${outcome.error}; the identity file was restored but the controller could not be restarted with --node-id ${from} (${outcome.rollbackError}): manual recovery required`,
        { actions },
      );
}

/** 4. The restart happens elsewhere: switch in-process, restore the file on failure. */
async function switchInProcess(
  writer: SafeFileWriter,
  result: ReplaceResult,
  supervisor: ControllerSupervisor,
  plan: SwitchPlan & { readonly operationId: string },
): Promise<NodeInstallResult> {
  let restored = false;
  const outcome = await switchNodeId(supervisor, plan, {
    beforeRollback: async () => {
      await restoreWritten(
        writer,
        [result],
        new FleetError('VERIFICATION_FAILED', 'the switch failed'),
      );
      restored = true;
    },
  });
  if (outcome.switched) {
    return {
      files: [result],
      actions: switchedActions(plan.from, plan.to, supervisor.kind, outcome),
      verified: true,
    };
  }
  if (!restored)
    await restoreWritten(
      writer,
      [result],
      new FleetError('VERIFICATION_FAILED', outcome.error ?? 'the switch failed'),
    );
  throw failedSwitchError(plan.from, plan.to, outcome);
}

/** The domain's installer, with its supervisor seam (tests pass a recorded supervisor). */
export function createTransportIdentityInstaller(
  options: TransportIdentityOptions = {},
): Installer {
  const supervisorOf = options.supervisor ?? recordedSupervisor;
  const launch = options.launch ?? defaultLaunch;

  async function install(
    ctx: NodeContext,
    request: NodeInstallRequest,
    writer: SafeFileWriter,
  ): Promise<NodeInstallResult> {
    const file = oneFileRequest(request, {
      domain: DOMAIN,
      fileId: IDENTITY.id,
      name: 'the identity file',
    });
    const { text, from, to, supervisor } = await accept(
      ctx,
      request,
      file,
      supervisorOf,
      options.launch !== undefined,
    );

    // 2. The file, read back.
    const [result] = (await writeVerified(writer, [
      {
        path: file.path,
        expectedSha256: file.expectedSha256,
        content: new TextEncoder().encode(text),
      },
    ])) as [ReplaceResult];

    // 3. Nothing to restart.
    if (supervisor === null)
      return { files: [result], actions: unchangedActions(to), verified: true };

    const plan = { from, to, operationId: request.operationId };
    // 5. The restart replaces this process: answer first, switch from outside, settle at start.
    if (supervisor.replacesCaller) {
      return {
        files: [result],
        actions: pendingActions(from, to, supervisor.kind),
        verified: false,
        pending: {
          expect: { nodeId: to },
          detail: `restart pending: --node-id ${from} -> ${to} through the ${supervisor.kind} supervisor`,
          start: () => launch(plan, supervisor, ctx),
        },
      };
    }
    // 4. The restart happens elsewhere: switch in-process, roll back on failure.
    return switchInProcess(writer, result, supervisor, plan);
  }

  return {
    domain: DOMAIN,
    view: (_file, renderedCanonical) => renderedCanonical,
    managed: (_file, live) => live,
    check,
    install,
  };
}

/** The domain's installer as the registry loads it (`register.ts`). */
export const transportIdentityInstaller: Installer = createTransportIdentityInstaller();
