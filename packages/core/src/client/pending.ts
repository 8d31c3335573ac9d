/**
 * An install whose coupled action restarts the controller itself (transport-identity, contract §10.2)
 * is answered before the restart: its receipt has `pending` actions and `verified: false`. The
 * node journals the operation and the restarted controller settles it at its start (completed and
 * verified, or every file restored: rolled back). The operator then polls the operation's status —
 * through the restart, when the controller does not answer at all — and verifies for itself that
 * the restarted controller reports the expected node id.
 */
import { FleetError, isFleetError } from '../errors.js';
import type { Receipt } from '../wire/receipt.js';
import type { OperationStatusResponse } from '../wire/schemas.js';
import type { ControllerClient } from './client.js';

/** How long the operator waits for a restart to settle by default (a failed start is retried). */
export const DEFAULT_PENDING_TIMEOUT_MS = 120_000;

/** True when the node answered before a coupled restart: poll with {@link settlePendingInstall}. */
export function hasPendingActions(receipt: Pick<Receipt, 'actions'>): boolean {
  return receipt.actions.some((action) => action.status === 'pending');
}

export interface SettleOptions {
  /** The node id the restarted controller must report (the host's `node_id`), if known. */
  readonly expectNodeId?: string;
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
  /** Progress lines (stderr in the CLI). */
  readonly onWait?: (line: string) => void;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/** Errors that mean "the controller is restarting": keep polling until the deadline. */
const TRANSIENT = new Set([
  'HOST_UNREACHABLE',
  'REQUEST_TIMEOUT',
  'OVERLOADED',
  'RESPONSE_INVALID',
]);

/**
 * Polls the operation of a pending receipt until the node settles it, then checks the restarted
 * controller's identity. Returns the settled receipt (`installed` and verified, or `rolled-back`
 * with its error); throws `VERIFICATION_FAILED` when the node does not settle in time or the
 * controller that answers is not the one expected.
 */
export async function settlePendingInstall(
  client: Pick<ControllerClient, 'host' | 'operationStatus' | 'identity'>,
  pending: Receipt,
  options: SettleOptions = {},
): Promise<Receipt> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PENDING_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? 500;
  const now = options.now ?? (() => Date.now());
  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + timeoutMs;
  const id = pending.operationId;
  options.onWait?.(
    `${client.host}: ${pending.actions
      .filter((a) => a.status === 'pending')
      .map((a) => a.kind)
      .join(', ')} pending; waiting for the restarted controller to settle operation ${id}`,
  );
  let status: OperationStatusResponse | undefined;
  let last = '';
  for (;;) {
    try {
      status = await client.operationStatus(id);
      if (status.state !== 'in-progress') break;
      last = 'still in progress';
    } catch (error) {
      if (!isFleetError(error) || !TRANSIENT.has(error.code)) throw error;
      last = `${error.code}: ${error.message}`;
    }
    if (now() >= deadline) {
      throw new FleetError(
        'VERIFICATION_FAILED',
        `${client.host}: operation ${id} did not settle within ${Math.round(timeoutMs / 1000)} s (last: ${last}); the controller was being restarted and may need manual recovery: check its supervisor`,
        {
          suggestions: [
            `once the host answers, its operation ${id} tells the outcome (GET /v1/operations/${id}); fleet drift shows the node id it runs with`,
          ],
        },
      );
    }
    await sleep(intervalMs);
  }
  if (status.receipt === undefined) {
    const why = status.error
      ? `${status.error.code}: ${status.error.message}`
      : (status.recovery?.detail ?? status.state);
    throw new FleetError(
      'VERIFICATION_FAILED',
      `${client.host}: operation ${id} ${status.state}: ${why}`,
    );
  }
  const receipt = status.receipt;
  if (receipt.outcome === 'rolled-back' || !receipt.verified) return receipt;
  // The node says verified; the operator checks for itself which controller answers now.
  const identity = await client.identity();
  const expected = options.expectNodeId ?? receipt.host;
  if (identity.nodeId !== expected || identity.nodeIdFlag !== expected) {
    throw new FleetError(
      'VERIFICATION_FAILED',
      `${client.host}: the restarted controller reports node id ${identity.nodeId} (--node-id ${identity.nodeIdFlag}), not ${expected}`,
    );
  }
  return receipt;
}
