/**
 * Tests that need a system tool or a privilege the machine may lack are pending there, with the
 * reason and the Debian package — never failing, never silently passing. (A local stand-in for
 * testkit's `requireSystemTools`, which is not on this branch yet.)
 */
import { spawnSync } from 'node:child_process';

export interface Skippable {
  skip(): void;
}

/** Pending unless `command` runs (`command --version` or the given probe exits 0). */
export function requireTool(
  context: Skippable,
  command: string,
  debianPackage: string,
  purpose: string,
  probe: readonly string[] = ['--version'],
): void {
  const result = spawnSync(command, probe, { stdio: 'ignore' });
  if (result.error === undefined && result.status === 0) return;
  process.stderr.write(
    `      pending: ${purpose}: needs ${command} (Debian package ${debianPackage}), which this machine lacks or cannot run\n`,
  );
  context.skip();
}

/** Pending with a reason of the machine (no permission to mount, not root…). */
export function skipBecause(context: Skippable, reason: string): void {
  process.stderr.write(`      pending: ${reason}\n`);
  context.skip();
}
