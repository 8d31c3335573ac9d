/**
 * Tests that need a system tool or a privilege the machine may lack are pending there, with the
 * reason and the Debian package — never failing, never silently passing, and recorded for CI
 * (`@fleet/testkit` requireSystemTools / skipForEnvironment). This adds a probe: a tool that is
 * installed but cannot do what the test needs here (`unshare -rm` without user namespaces) is
 * pending too.
 */
import { spawnSync } from 'node:child_process';
import {
  hasSystemTool,
  requireSystemTools,
  skipForEnvironment,
  type SkippableContext,
} from '@fleet/testkit';

/** Pending unless `command` is installed and `command ...probe` exits 0 (default `--version`). */
export function requireTool(
  context: SkippableContext,
  command: string,
  debianPackage: string,
  purpose: string,
  probe: readonly string[] = ['--version'],
): void {
  if (!hasSystemTool(command)) {
    requireSystemTools(context, [{ command, debianPackage }], purpose);
    return;
  }
  const result = spawnSync(command, probe, { stdio: 'ignore' });
  if (result.error === undefined && result.status === 0) return;
  skipForEnvironment(
    context,
    `${purpose}: \`${[command, ...probe].join(' ')}\` fails on this machine`,
    [debianPackage],
  );
}

/** Pending with a reason of the machine (no permission to mount, not root…). */
export function skipBecause(context: SkippableContext, reason: string): void {
  skipForEnvironment(context, reason);
}
