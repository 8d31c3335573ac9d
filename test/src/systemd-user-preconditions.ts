/**
 * Whether this machine can run a harness user manager (systemd-user.ts: "Where this cannot
 * work"): the tools it needs, root, a PID 1 that is not systemd, cgroups systemd can use — and, when
 * not, the suite pending with the reason, recorded for `.ci/run` like a missing tool. Apart so
 * that the network hosts (netns-host.ts) ask the same questions without starting anything.
 */
import {
  SYSTEM_TOOLS,
  requireSystemTools,
  skipForEnvironment,
  type SkippableContext,
} from '@fleet/testkit';
import { readText } from './processes.js';
import { cgroupLayout } from './systemd-user-cgroups.js';

// ---- what the machine offers ----------------------------------------------------------------

/** Why a user manager cannot be started here, or `null` when it can. */
export function systemdUserProblem(): string | null {
  if (process.platform !== 'linux') return `the machine runs ${process.platform}, not Linux`;
  if (process.getuid?.() !== 0) {
    return 'the real user manager is started for a dedicated test user, which needs root (useradd, runuser, cgroup delegation); run the suite as root';
  }
  const init = readText('/proc/1/comm')?.trim();
  if (init === 'systemd') {
    return 'PID 1 is systemd: this harness starts a user manager only where no system manager runs (CI, containers); on a systemd host the system manager owns user@.service and its cgroups';
  }
  if (cgroupLayout().length === 0)
    return 'no writable cgroup hierarchy for systemd under /sys/fs/cgroup';
  return null;
}

/** The tools a user manager needs (the suite is pending, naming the package, when one is missing). */
export const SYSTEMD_USER_TOOLS = [
  SYSTEM_TOOLS.systemd,
  SYSTEM_TOOLS.systemctl,
  SYSTEM_TOOLS.systemdRun,
  SYSTEM_TOOLS.runuser,
  SYSTEM_TOOLS.useradd,
  SYSTEM_TOOLS.usermod,
  SYSTEM_TOOLS.userdel,
] as const;

/** Pending (tools, root, PID 1, cgroups) unless a user manager can run here. */
export function requireSystemdUserEnvironment(context: SkippableContext): void {
  requireSystemTools(context, SYSTEMD_USER_TOOLS, 'runs against a real systemd --user manager');
  const problem = systemdUserProblem();
  if (problem !== null) {
    skipForEnvironment(context, `runs against a real systemd --user manager: ${problem}`, [
      'systemd',
    ]);
  }
}

export function skipForCgroups(context: SkippableContext, error: unknown): void {
  if ((error as { cgroupProblem?: boolean }).cgroupProblem) {
    skipForEnvironment(
      context,
      `runs against a real systemd --user manager: the cgroups cannot be delegated (${(error as Error).message})`,
      ['systemd'],
    );
  }
}
