/**
 * The install of one host's domain through its controller (contract §8.4), operator side: the one
 * service `fleet config install` and `fleet apply` share. It sends a plan-bound request — each
 * file with the live sha256 it was planned against, so the node compares and swaps per file — with
 * the domain's host variables and its coupled actions named by node-policy action id (fleet.yaml
 * `domains.<d>.reload`: the node decides what that runs); waits for a coupled restart of the
 * controller itself to settle; and records the verb in the operator's log, refused, failed or not.
 *
 * Every write names its commit (contract §8.4, issue 36): the request carries `repoCommit`, the
 * HEAD commit the context read everything at (`source.commit`), which the node writes into the
 * receipt and its audit record, and the operator's log entry names it too. A node that predates
 * the field is sent the request again without it (core `installThrough`), and says so.
 */
import type { PlannedInstall, Receipt } from '@fleet/core';
import * as core from '@fleet/core';
import type { FleetContext } from './context.js';

export interface InstallPlannedInput {
  readonly context: FleetContext;
  readonly host: string;
  readonly domain: string;
  readonly planned: PlannedInstall;
  /** The verb named in the operator's log (`config install`, `apply`). */
  readonly verb: string;
  /**
   * Progress while a coupled restart settles, and the note that a node predates `repoCommit`
   * (stderr).
   */
  readonly onWait?: (line: string) => void;
}

/** Sends the install and returns the node's receipt; throws the node's refusal as a FleetError. */
export async function installPlanned(input: InstallPlannedInput): Promise<Receipt> {
  const { context, host, domain, planned, verb } = input;
  const runtime = context.domains.get(domain);
  if (!runtime?.installer) {
    throw new core.FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `domain ${domain} has no installer: its plugin declares the domain but cannot install it yet`,
    );
  }
  const operationId = core.newOperationId();
  const parameters = core.installParameters(context.repo, host, runtime.declaration);
  const actions = core.installActions(context.repo, runtime.declaration);
  const paths = planned.files.map((file) => file.path);
  const repoCommit = context.source.commit;
  let receipt: Receipt;
  try {
    const sent = await core.installThrough(context.client(host), {
      operationId,
      domain,
      files: planned.files.map((file) => ({ ...file })),
      parameters,
      ...(Object.keys(actions).length > 0 ? { actions } : {}),
      repoCommit,
      // A refused action's output tail, shown under the error (where the node policy returns it).
      toolOutput: true,
    });
    receipt = sent.receipt;
    if (!sent.commitSent) {
      input.onWait?.(
        `${host}: the node predates an install's repoCommit: installed without it, so its receipt and audit record do not name commit ${repoCommit.slice(0, 12)} (the operator log does)`,
      );
    }
    // A coupled restart of the controller itself (transport-identity) answers before it
    // happens: poll the node until the restarted controller settles the operation, then
    // check its identity (contract §10.2).
    if (core.hasPendingActions(receipt)) {
      receipt = await core.settlePendingInstall(context.client(host), receipt, {
        ...(parameters['node_id'] === undefined ? {} : { expectNodeId: parameters['node_id'] }),
        ...(input.onWait ? { onWait: input.onWait } : {}),
      });
    }
  } catch (error) {
    const failure = core.asFleetError(error);
    await core.recordOperatorVerb({
      verb,
      host,
      operationId,
      domain,
      repoCommit,
      paths,
      outcome: failure.code === 'HOST_UNREACHABLE' ? 'unreachable' : 'failed',
      code: failure.code,
      exitCode: failure.exitCode,
      detail: failure.message,
    });
    throw error;
  }
  await core.recordOperatorVerb({
    verb,
    host,
    operationId,
    domain,
    repoCommit,
    paths,
    outcome:
      receipt.outcome === 'unchanged'
        ? 'unchanged'
        : receipt.outcome === 'installed'
          ? 'ok'
          : 'failed',
    code: receipt.error?.code ?? null,
    // A rolled-back install is a failed verification (contract §7), whatever the node's code.
    exitCode: receipt.outcome === 'rolled-back' ? core.ExitCode.verification : core.ExitCode.ok,
    detail: `${receipt.outcome}, verified: ${receipt.verified}`,
  });
  return receipt;
}
