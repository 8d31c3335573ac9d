/**
 * Running an install's domain installer (contract §8.4, §10.4), node side: the operation's
 * `OperationWriter` (its locks, journal, limits, the token re-checked before each commit, the
 * secret memory), every secret and every live sha256 checked before anything is written, then the
 * installer itself. A failure is returned as the wire error the receipt or the answer carries
 * (install-answer.ts); undoing its writes is install-undo.ts's.
 */
import {
  FleetError,
  isFleetError,
  resolveSecrets,
  type ActionOutcome,
  type ActionRun,
  type InstallRequest,
  type NodeInstallResult,
  type SecretValues,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { failpoint } from '../failpoints.js';
import { managedTarget } from '../fs/managed-target.js';
import { readLive } from '../fs/safe-path.js';
import { toWireError } from '../http/respond.js';
import type { ControllerRuntime } from '../runtime.js';
import { tokenState } from '../tokens/store.js';
import type { Principal } from '../tokens/auth.js';
import { preconditionFailed } from '../temp-swap.js';
import { OperationWriter } from '../writer.js';
import type { InstallerOutcome } from './install-answer.js';

async function recheckToken(runtime: ControllerRuntime, principal: Principal): Promise<void> {
  const record = (await runtime.tokens.current()).get(principal.id);
  const state = record ? tokenState(record, runtime.clock.now()) : 'revoked';
  if (state === 'revoked')
    throw new FleetError(
      'AUTH_REVOKED',
      `token ${principal.id} was revoked during the install; nothing more was changed`,
    );
  if (state === 'expired')
    throw new FleetError('AUTH_EXPIRED', `token ${principal.id} expired during the install`);
}

/** The secrets of one operation, read once the installer runs (the writer's retain needs them). */
export interface SecretsHolder {
  values?: SecretValues;
}

/** The operation's writer: its locks, journal, limits, token re-check and secret memory. */
export function operationWriter(
  runtime: ControllerRuntime,
  principal: Principal,
  request: InstallRequest,
  touched: Set<string>,
  secrets: SecretsHolder,
): OperationWriter {
  return new OperationWriter({
    home: runtime.home,
    state: runtime.state,
    operationId: request.operationId,
    domain: request.domain,
    allowlist: runtime.allowlist,
    locks: runtime.locks,
    operations: runtime.operations,
    clock: runtime.clock,
    fileLimit: runtime.limits.maxFileBytes,
    beforeCommit: () => recheckToken(runtime, principal),
    retain: (holders) => {
      for (const holder of holders) touched.add(holder.path);
      return runtime.secretMemory.retain(holders, secrets.values ?? new Map());
    },
  });
}

/**
 * Checks every secret and every live sha256, then runs the domain's installer with the writer.
 * Never throws: a failure is returned, as the wire error the receipt or the answer carries.
 */
export async function runInstaller(
  runtime: ControllerRuntime,
  request: InstallRequest,
  writer: OperationWriter,
  secrets: SecretsHolder,
): Promise<InstallerOutcome> {
  const runs: ActionRun[] = [];
  let result: NodeInstallResult | undefined;
  try {
    // Inside the try: a malformed env file fails this operation cleanly (its record answers a
    // retry of the same id; a new id is free to go), never leaves its journal open.
    secrets.values = await runtime.secrets();
    const installer = await runtime.registry.installer(request.domain);
    for (const file of request.files) {
      // A file that is not a template, or bytes (`encoding`), names no secret (contract §10.4).
      if (file.template !== false && file.encoding === undefined) {
        resolveSecrets(file.content, secrets.values, file.path);
      }
      const live = await readLive(
        runtime.home,
        await managedTarget(runtime.home, file.path, runtime.allowlist.symlinkDirs),
        runtime.limits.maxFileBytes,
      );
      if ((live?.sha256 ?? null) !== file.expectedSha256)
        throw preconditionFailed(file.path, live?.sha256 ?? null);
    }
    const ctx = createNodeContext({
      home: runtime.home,
      nodeId: runtime.nodeId,
      clock: runtime.clock,
      secrets: () => runtime.secrets(),
      beforeProcess: () => failpoint('install.during_action'),
      actions: {
        domain: request.domain,
        actions: runtime.allowlist.actionsOf(request.domain),
        runs,
      },
      // The node's recorded supervisor, for a domain that restarts the controller (§10.2).
      registry: runtime.registry,
      ...(runtime.view.policy.supervisor
        ? { policySupervisor: runtime.view.policy.supervisor }
        : {}),
    });
    // The commit is the node's record of provenance and `toolOutput` a wish about the answer, not
    // the installer's input: a plugin's `NodeInstallRequest` stays what it was (core
    // interfaces/installer.ts).
    const { repoCommit: _provenance, toolOutput: _shown, ...forInstaller } = request;
    result = await installer.install(
      ctx,
      { ...forInstaller, files: [...request.files], actions: { ...request.actions } },
      writer,
    );
    if (!result.verified && result.pending === undefined)
      throw new FleetError(
        'VERIFICATION_FAILED',
        `the ${request.domain} installer could not verify the install`,
      );
    return { result, failure: undefined, failedActions: [], runs };
  } catch (error) {
    let failure = toWireError(error);
    if (!isFleetError(error))
      failure = {
        ...failure,
        message: `the ${request.domain} installer failed: ${(error as Error)?.message ?? String(error)}`,
      };
    const shown = request.toolOutput === true && isFleetError(error) ? error.toolOutput : undefined;
    return {
      result,
      failure,
      failedActions: failedActionsOf(error),
      runs,
      ...(shown === undefined ? {} : { toolOutput: shown }),
    };
  }
}

/** The coupled actions that ran before the installer threw: `FleetError.actions` (typed in core). */
function failedActionsOf(error: unknown): readonly ActionOutcome[] {
  return isFleetError(error) ? (error.actions ?? []) : [];
}
