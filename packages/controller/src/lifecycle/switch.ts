/**
 * The `--node-id` switch from a process of its own (`fleet controller switch-node-id`, contract
 * §10.2): the controller that answered the install is the process its supervisor's restart
 * replaces, so the switch — record the new flag, restart, check; on failure the old flag, restart
 * again — runs here, started once the answer is sent, out of the restart's reach. Its supervisor
 * is the one the node recorded; nothing comes from a request.
 *
 * This process only drives the supervisor. Whether the switch held is settled by the controller
 * that comes up (settle-pending.ts): the one with the new id completes the journaled operation;
 * the one with the old id restores the identity file from its backup at its start and reports it
 * rolled back.
 */
import {
  adapterControllerSupervisor,
  FleetError,
  readSupervisorRecord,
  switchNodeId,
  type Registry,
  type SwitchOutcome,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { SWITCH_RESTART_TIMEOUT_MS } from './supervisor.js';

export interface NodeIdSwitchOptions {
  readonly home: string;
  readonly registry: Registry;
  readonly from: string;
  readonly to: string;
  readonly operationId: string;
  readonly log: (line: string) => void;
  /** How long a restarted controller has to come up (default 200 s). */
  readonly timeoutMs?: number;
}

export async function runNodeIdSwitch(options: NodeIdSwitchOptions): Promise<SwitchOutcome> {
  const record = await readSupervisorRecord(options.home);
  if (record === null) {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      'this node records no supervisor (~/.local/state/fleet/supervisor.json): nothing to switch',
    );
  }
  const adapter = await options.registry.bootstrapAdapter(record.supervisor);
  const ctx = createNodeContext({ home: options.home, nodeId: options.from });
  const supervisor = adapterControllerSupervisor(adapter, ctx, {
    replacesCaller: false,
    timeoutMs: options.timeoutMs ?? SWITCH_RESTART_TIMEOUT_MS,
  });
  options.log(
    `operation ${options.operationId}: --node-id ${options.from} -> ${options.to} through the ${record.supervisor} supervisor (${record.name})`,
  );
  const outcome = await switchNodeId(supervisor, { from: options.from, to: options.to });
  options.log(`operation ${options.operationId}: ${JSON.stringify(outcome)}`);
  return outcome;
}
