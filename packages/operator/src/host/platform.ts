/**
 * What `fleet host add` does differently per operating system (pure; contract §12.1): the host's
 * `uname -s` chooses the platform fleet.yaml records, the supervisor the controller runs under, the
 * node policy's supervisor, and the home-relative folders the runtime and a shipped Node.js go to.
 *
 * - Linux: `systemd --user`, `fleet-controller.service`, the XDG layout (`~/.local/share/fleet/`).
 * - macOS: launchd, the LaunchAgent `dev.fleet.controller` in `~/Library/LaunchAgents/`, installed
 *   with `launchctl bootstrap gui/<uid>` by the bootstrap-launchd adapter on the node; the runtime
 *   in `~/Library/Application Support/fleet/` (ADR 0020, core's `runtimeLayout` for `darwin`).
 *
 * Everything the node itself decides (the adapter, the layout it stages into) it decides from its
 * own platform: these values only let the operator's plan, probe and policy say the same thing.
 */
import { RUNTIME_DIR, RUNTIME_DIR_DARWIN, type NodePolicyInput, type Platform } from '@fleet/core';

/** The LaunchAgent's label on a Mac (ADR 0020). */
export const LAUNCHD_LABEL = 'dev.fleet.controller';
/** The controller's unit under `systemd --user`. */
export const CONTROLLER_UNIT = 'fleet-controller.service';

export interface HostPlatform {
  readonly platform: Extract<Platform, 'linux' | 'darwin'>;
  readonly supervisor: 'systemd-user' | 'launchd';
  /** The node policy's `supervisor` section. */
  readonly policySupervisor: NonNullable<NodePolicyInput['supervisor']>;
  /** `~/`-relative runtime root (core's layout for the platform). */
  readonly runtimeDir: string;
  /** `~/`-relative folder a Node.js the release ships is unpacked into, per version and platform. */
  readonly nodeDir: string;
  /** How the plan names the controller's supervision, in words. */
  readonly supervision: string;
}

const LINUX: HostPlatform = {
  platform: 'linux',
  supervisor: 'systemd-user',
  policySupervisor: { kind: 'systemd-user', unit: CONTROLLER_UNIT },
  runtimeDir: RUNTIME_DIR,
  nodeDir: '.local/share/fleet/node',
  supervision: `under systemd --user (${CONTROLLER_UNIT})`,
};

const DARWIN: HostPlatform = {
  platform: 'darwin',
  supervisor: 'launchd',
  policySupervisor: { kind: 'launchd', label: LAUNCHD_LABEL },
  runtimeDir: RUNTIME_DIR_DARWIN,
  nodeDir: 'Library/Application Support/fleet/node',
  supervision: `as the LaunchAgent ${LAUNCHD_LABEL} (~/Library/LaunchAgents, launchctl bootstrap gui/UID)`,
};

/** The platform `uname -s` names, or `null` for one `fleet host add` cannot enroll (pure). */
export function hostPlatformOf(os: string): HostPlatform | null {
  if (os === 'Linux') return LINUX;
  if (os === 'Darwin') return DARWIN;
  return null;
}

/**
 * The platform to plan with (pure): an unknown system is planned as Linux would be, and its
 * problem (probe.ts `enrollmentProblems`) stops the enrollment before anything is sent.
 */
export function plannedPlatformOf(os: string): HostPlatform {
  return hostPlatformOf(os) ?? LINUX;
}
