import {
  adapterControllerSupervisor,
  type AdapterSupervisorOptions,
  type ControllerSupervisor,
  type NodeContext,
} from '@fleet/core/plugin';
import { createSystemdUserAdapter, type SystemdUserAdapterOptions } from './adapter.js';

/**
 * core's `ControllerSupervisor` for a controller run by the systemd user unit (contract §10.2):
 * `recordNodeId` rewrites `ExecStart=`'s `--node-id` and reloads, `restart` restarts the unit and
 * resolves once the new controller runs with the recorded id and accepts connections.
 */
export function systemdControllerSupervisor(
  ctx: NodeContext,
  options: AdapterSupervisorOptions & SystemdUserAdapterOptions = {},
): ControllerSupervisor {
  return adapterControllerSupervisor(createSystemdUserAdapter(options), ctx, options);
}
