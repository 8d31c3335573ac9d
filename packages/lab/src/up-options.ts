/** What `fleet lab up` (up.ts) is asked for: its flags and what the operator's CLI gives it. */
import type { Registry } from '@fleet/core';
import type { LabDevPlugin } from './dev-plugins.js';

/** What runs a lab's controllers. */
export type LabSupervisorKind = 'lab' | 'systemd-user';

export interface LabUpOptions {
  readonly dir: string;
  /** Undefined: the default for a new lab, the recorded count for a stopped one. */
  readonly hosts?: number | undefined;
  readonly virtual: boolean;
  /** Undefined: the lab supervisor for a new lab, what a stopped lab's nodes record for it. */
  readonly supervisor?: LabSupervisorKind | undefined;
  /** The `fleet` entry point supervisors and controllers run (this CLI's own). */
  readonly fleetBin: string;
  readonly registry: Registry;
  /**
   * The plugins linked into the operator's CLI (dev-plugins.ts): under the lab supervisor its nodes
   * load them from their folders and serve their domains.
   */
  readonly devPlugins?: readonly LabDevPlugin[];
  /**
   * `--node-actions FILE`: the node policy actions a new lab's nodes define and the roles its
   * fleet.yaml names (node-actions.ts). Refused for a stopped lab: its policies are written.
   */
  readonly nodeActionsFile?: string | undefined;
  readonly readyTimeoutMs?: number;
  readonly progress?: (line: string) => void;
}
