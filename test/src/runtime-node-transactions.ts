/**
 * Driving a runtime node's transactions (docs/runtime-lifecycle.md) the ways the suites do: stage
 * and activate through its controller, wait for a transaction to end by its status, run the
 * node-local runner directly as the node's user, and ask the recovery receiver for the status
 * (`fleet bootstrap receive`), which answers whichever runtime is live, or none.
 */
import { join } from 'node:path';
import {
  newOperationId,
  runtimeLayout,
  type RuntimeExpectation,
  type RuntimeStatusResponse,
} from '@fleet/core';
import { waitFor } from './fleet.js';
import { sha256 } from './runtime-node-expectation.js';
import type { RuntimeNode } from './runtime-node-handle.js';

/** Stage + activate through the controller; returns the transaction id. */
export async function upgradeThroughController(
  node: RuntimeNode,
  bytes: Buffer,
  target: RuntimeExpectation,
  options: {
    readonly acceptanceTimeoutMs?: number;
    readonly kind?: 'upgrade' | 'bootstrap';
    /** The release signature's one-line body (ADR 0019), sent as `artifact.signature`. */
    readonly signature?: string;
  } = {},
): Promise<string> {
  const staged = await node.client.runtimeStage({
    operationId: newOperationId(),
    kind: options.kind ?? 'upgrade',
    supervisor: 'systemd-user',
    planId: null,
    target,
    artifact: {
      sha256: sha256(bytes),
      bytes: bytes.length,
      content: bytes.toString('base64'),
      ...(options.signature === undefined ? {} : { signature: options.signature }),
    },
  });
  await node.client.runtimeActivate({
    operationId: newOperationId(),
    transaction: staged.transaction,
    acceptanceTimeoutMs: options.acceptanceTimeoutMs ?? 20_000,
  });
  return staged.transaction;
}

/** Polls status until the transaction `id` (or, with `null`, the newest) has ended. */
export async function waitForEnd(
  node: RuntimeNode,
  id: string | null,
  timeoutMs = 180_000,
): Promise<RuntimeStatusResponse> {
  let last: RuntimeStatusResponse | null = null;
  await waitFor(
    async () => {
      last = await node.client.runtimeStatus({ supervisor: 'systemd-user' }).catch(() => null);
      const txn = last?.transaction;
      return (
        txn !== null &&
        txn !== undefined &&
        (id === null || txn.id === id) &&
        txn.lastStep === 'end' &&
        last?.busy === null
      );
    },
    timeoutMs,
    `transaction ${id ?? '(newest)'} to end`,
  );
  return last as unknown as RuntimeStatusResponse;
}

/** Runs the node-local runner directly, as the node's user would (no go to wait for). */
export async function runRunner(
  node: RuntimeNode,
  mode: 'activate' | 'rollback',
  transaction: string,
  extra: readonly string[] = [],
): Promise<{ code: number | null; output: string }> {
  const script = join(
    runtimeLayout(node.home, 'linux').generation(node.artifact.sha256),
    'package',
    'bin',
    'run.js',
  );
  const ran = await node.manager.run(
    node.manager.node,
    [
      script,
      'controller',
      'runtime-run',
      '--home',
      node.home,
      '--mode',
      mode,
      '--transaction',
      transaction,
      '--acceptance-timeout-ms',
      '30000',
      ...extra,
    ],
    { cwd: node.home, timeoutMs: 300_000 },
  );
  return { code: ran.exitCode, output: `${ran.stdout}${ran.stderr}` };
}

/**
 * The node-local status, as the recovery receiver answers it (`fleet bootstrap receive` with
 * `SSH_ORIGINAL_COMMAND=status`, run as the node's user): it works whichever runtime is live, or
 * none.
 */
export async function receiverStatus(node: RuntimeNode): Promise<RuntimeStatusResponse> {
  const ran = await node.manager.fleet(['bootstrap', 'receive', '--home', node.home], {
    env: { SSH_ORIGINAL_COMMAND: 'status' },
    cwd: node.home,
  });
  if (ran.exitCode !== 0) throw new Error(`receiver status exited ${ran.exitCode}: ${ran.stderr}`);
  return JSON.parse(ran.stdout.trim().split('\n').at(-1) as string) as RuntimeStatusResponse;
}
