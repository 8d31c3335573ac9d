/**
 * Tests that need a system tool the machine may lack (sshd, strace, systemd…) are pending there,
 * with the reason and the Debian package that provides the tool — never failing, never silently
 * passing. On a machine that has everything (CI installs the packages) nothing is pending, and
 * CI checks that: when `FLEET_TEST_SKIP_LOG` names a file, every such skip appends one JSON line to
 * it, so the CI script can fail a run in which a test was skipped for want of a tool.
 *
 * Use it in a `before` hook (the whole `describe` is pending) or at the start of a test:
 *
 * ```ts
 * before(function () {
 *   requireSystemTools(this, [SYSTEM_TOOLS.sshd], 'the SSH recovery path runs against a real sshd');
 * });
 * ```
 */
import { accessSync, appendFileSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** A program a test runs, and the Debian package that provides it. */
export interface SystemTool {
  /** An absolute path, or a command name looked up on PATH. */
  readonly command: string;
  readonly debianPackage: string;
}

/** The system tools fleet's own tests use. */
export const SYSTEM_TOOLS = {
  sshd: { command: '/usr/sbin/sshd', debianPackage: 'openssh-server' },
  ssh: { command: 'ssh', debianPackage: 'openssh-client' },
  sshKeygen: { command: 'ssh-keygen', debianPackage: 'openssh-client' },
  strace: { command: 'strace', debianPackage: 'strace' },
  systemd: { command: '/lib/systemd/systemd', debianPackage: 'systemd' },
  systemctl: { command: 'systemctl', debianPackage: 'systemd' },
  systemdAnalyze: { command: 'systemd-analyze', debianPackage: 'systemd' },
  systemdRun: { command: 'systemd-run', debianPackage: 'systemd' },
  runuser: { command: 'runuser', debianPackage: 'util-linux' },
  useradd: { command: 'useradd', debianPackage: 'passwd' },
  usermod: { command: 'usermod', debianPackage: 'passwd' },
  userdel: { command: 'userdel', debianPackage: 'passwd' },
  openssl: { command: 'openssl', debianPackage: 'openssl' },
  unshare: { command: 'unshare', debianPackage: 'util-linux' },
  ip: { command: 'ip', debianPackage: 'iproute2' },
  python3: { command: 'python3', debianPackage: 'python3' },
  bash: { command: '/bin/bash', debianPackage: 'bash' },
} as const satisfies Record<string, SystemTool>;

/** What `requireSystemTools` needs of a mocha context (`this` in a hook or a test). */
export interface SkippableContext {
  skip(): void;
  /** In a hook: the hook, whose `parent` is the suite; in a test: the test. */
  readonly test?: MochaRunnable | undefined;
  /** In a hook: the test it runs before or after. */
  readonly currentTest?: MochaRunnable | undefined;
}

interface MochaRunnable {
  readonly type?: string;
  readonly title?: string;
  fullTitle?(): string;
  readonly parent?: { fullTitle?(): string } | undefined;
}

/** The environment variable naming the file each environment-caused skip is recorded in. */
export const SKIP_LOG_ENV = 'FLEET_TEST_SKIP_LOG';

/** True when `command` is an executable file (absolute) or found executable on `PATH`. */
export function hasSystemTool(command: string, path = process.env['PATH'] ?? ''): boolean {
  const candidates = isAbsolute(command)
    ? [command]
    : path
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, command));
  return candidates.some((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Marks the running hook's suite (or the running test) pending when any of `tools` is missing,
 * printing why on stderr and recording it in `$FLEET_TEST_SKIP_LOG`. `purpose` says what the
 * tool is for, so the line explains itself.
 */
export function requireSystemTools(
  context: SkippableContext,
  tools: readonly SystemTool[],
  purpose: string,
): void {
  const missing = tools.filter((tool) => !hasSystemTool(tool.command));
  if (missing.length === 0) return;
  const needs = missing.map((tool) => `${tool.command} (Debian package ${tool.debianPackage})`);
  skipForEnvironment(
    context,
    `${purpose}: needs ${needs.join(', ')}, which this machine lacks`,
    missing.map((tool) => tool.debianPackage),
  );
}

/**
 * Marks the running hook's suite (or test) pending for a reason of the machine (not root, no
 * permission to mount, …), printed and recorded like a missing tool.
 */
export function skipForEnvironment(
  context: SkippableContext,
  reason: string,
  debianPackages: readonly string[] = [],
): void {
  const title = titleOf(context);
  process.stderr.write(`      pending: ${title}: ${reason}\n`);
  const log = process.env[SKIP_LOG_ENV];
  if (log !== undefined && log !== '') {
    appendFileSync(log, `${JSON.stringify({ title, reason, debianPackages })}\n`);
  }
  context.skip();
}

/** The suite a hook belongs to, or the test: what the spec reporter shows as pending. */
function titleOf(context: SkippableContext): string {
  const { test, currentTest } = context;
  if (test?.type === 'hook') {
    return test.parent?.fullTitle?.() ?? test.title ?? '(unnamed)';
  }
  const runnable = currentTest ?? test;
  return runnable?.fullTitle?.() ?? runnable?.title ?? '(unnamed)';
}
