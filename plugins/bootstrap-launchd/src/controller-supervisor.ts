import {
  adapterControllerSupervisor,
  type AdapterSupervisorOptions,
  type ControllerSupervisor,
  type NodeContext,
} from '@fleet/core/plugin';
import { createLaunchdAdapter, type LaunchdAdapterOptions } from './adapter.js';

/**
 * core's `ControllerSupervisor` for a controller run by the LaunchAgent (contract §10.2):
 * `recordNodeId` rewrites the agent's `ProgramArguments` with the new `--node-id` (written, not
 * loaded), `restart` loads it — bootout and bootstrap, the one restart — and resolves once the new
 * controller runs with the recorded id and accepts connections.
 */
export function launchdControllerSupervisor(
  ctx: NodeContext,
  options: AdapterSupervisorOptions & LaunchdAdapterOptions = {},
): ControllerSupervisor {
  return adapterControllerSupervisor(createLaunchdAdapter(options), ctx, options);
}
