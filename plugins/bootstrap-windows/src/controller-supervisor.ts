import {
  adapterControllerSupervisor,
  type AdapterSupervisorOptions,
  type ControllerSupervisor,
  type NodeContext,
} from '@fleet/core/plugin';
import { createWindowsTaskAdapter, type WindowsTaskAdapterOptions } from './adapter.js';

/**
 * core's `ControllerSupervisor` for a controller run by the scheduled task (contract §10.2):
 * `recordNodeId` re-creates the task with the new `--node-id` in its arguments, `restart` ends and
 * runs it and resolves once the new controller runs with the recorded id and accepts connections.
 */
export function windowsControllerSupervisor(
  ctx: NodeContext,
  options: AdapterSupervisorOptions & WindowsTaskAdapterOptions = {},
): ControllerSupervisor {
  // `timeoutMs` bounds the wait for the new controller, not each `schtasks` call: a short wait
  // must not kill a `/Run` that a loaded machine is slow to answer.
  const { timeoutMs: _wait, ...adapterOptions } = options;
  return adapterControllerSupervisor(createWindowsTaskAdapter(adapterOptions), ctx, options);
}
