/**
 * A failed bootstrap says why (issue 35 item 3): when a new controller does not come up, the
 * runner's `failed` record — and through it the operator's error — carries the controller's first
 * error lines, as its supervisor captured them:
 *
 * - systemd-user: `journalctl --user -u <unit> -n 20 --no-pager -o cat` (the unit's stderr and
 *   stdout go to the user journal); a node without journalctl, or whose journal the user cannot
 *   read, says so instead;
 * - lab: the lab supervisor's log (`nodes/<host>/supervisor.log` beside its socket,
 *   packages/lab/src/layout.ts), which holds the controller's output line by line;
 * - anything else: that no log is kept where the runner can read it.
 *
 * What travels is bounded (20 lines, 200 characters each, 1,500 in all) and redacted: every secret
 * value of the node's env-file chain (core `createRedactor`, as action output is, contract §5.1)
 * and anything shaped like a fleet token (`flt_<id>_<secret>`: its secret part), control
 * characters escaped so one record stays one line.
 */
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRedactor, type NodeContext } from '@fleet/core/node';

/** The lab supervisor's socket (`@fleet/lab`'s `LAB_SUPERVISOR_ENV`, supervisor-protocol.ts). */
const LAB_SUPERVISOR_ENV = 'FLEET_LAB_SUPERVISOR';

export const LOG_LINES = 20;
const LINE_CHARS = 200;
const TOTAL_CHARS = 1_500;
/** How much of the end of a lab log is read (its last lines are the controller's). */
const LAB_TAIL_BYTES = 64 * 1024;

/** A fleet token's secret part (packages/controller/src/tokens/token.ts). */
const TOKEN = /\b(flt_[0-9a-f]{16}_)[A-Za-z0-9_-]+/g;

/**
 * The excerpt of a controller's output (pure): the last {@link LOG_LINES} non-empty lines, each
 * redacted, escaped and cut, joined by ` | `, cut again to the total bound; `null` when empty.
 */
export function logExcerpt(
  text: string,
  redact: (line: string) => string = (l) => l,
): string | null {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(-LOG_LINES)
    .map((line) =>
      redact(line)
        .replace(TOKEN, '$1<redacted>')
        .replace(
          // eslint-disable-next-line no-control-regex -- control characters are what is escaped
          /[\x00-\x1f\x7f]/g,
          (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`,
        ),
    )
    .map((line) => (line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line));
  if (lines.length === 0) return null;
  const joined = lines.join(' | ');
  return joined.length > TOTAL_CHARS ? `…${joined.slice(joined.length - TOTAL_CHARS + 1)}` : joined;
}

/** The last LAB_TAIL_BYTES of a log file. */
async function tail(
  path: string,
): Promise<{ readonly source: string; readonly text: string } | { readonly unavailable: string }> {
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, LAB_TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      return { source: path, text: buffer.toString('utf8') };
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { unavailable: `${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}` };
  }
}

/** Where the controller's output is and how to read it, for a supervisor kind. */
async function rawLog(
  ctx: NodeContext,
  supervisor: string,
  unit: string,
  env: NodeJS.ProcessEnv,
): Promise<{ readonly source: string; readonly text: string } | { readonly unavailable: string }> {
  if (supervisor === 'systemd-user') {
    const args = ['--user', '-u', unit, '-n', String(LOG_LINES), '--no-pager', '-o', 'cat'];
    const source = `journalctl ${args.join(' ')}`;
    const extraEnv: Record<string, string> = {};
    for (const name of ['XDG_RUNTIME_DIR', 'DBUS_SESSION_BUS_ADDRESS'] as const) {
      const value = env[name];
      if (value !== undefined) extraEnv[name] = value;
    }
    const result = await ctx.processes
      .run({ command: 'journalctl', args, extraEnv, timeoutMs: 5_000 })
      .catch((error: Error) => ({
        exitCode: -1,
        stdout: '',
        stderr: error.message,
        timedOut: false,
      }));
    if (result.exitCode !== 0) {
      const why = result.timedOut
        ? 'timed out'
        : (result.stderr.trim().split('\n').at(-1) ?? '') || `exit ${result.exitCode}`;
      return { unavailable: `${source} failed (${why})` };
    }
    return { source, text: result.stdout };
  }
  if (supervisor === 'lab') {
    const socket = env[LAB_SUPERVISOR_ENV];
    if (socket === undefined) return { unavailable: `${LAB_SUPERVISOR_ENV} is not set` };
    return tail(join(dirname(socket), 'supervisor.log'));
  }
  if (supervisor === 'launchd') {
    // The agent's StandardOutPath (plugins/bootstrap-launchd: ~/Library/Logs/fleet/controller.log).
    const label = unit.replace(/\.plist$/, '');
    const name = label === 'dev.fleet.controller' ? 'controller' : label;
    return tail(join(ctx.home, 'Library', 'Logs', 'fleet', `${name}.log`));
  }
  return { unavailable: `the ${supervisor} supervisor keeps no log the runner can read` };
}

/**
 * One line for the runner's failure: `controller log (SOURCE): line | line …`, or why there is
 * none. Never throws: a failure to read the log must not hide the failure it explains.
 */
export async function controllerLogLine(input: {
  readonly ctx: NodeContext;
  readonly supervisor: string;
  /** The unit (systemd-user) the controller runs as. */
  readonly unit: string;
  readonly env?: NodeJS.ProcessEnv;
}): Promise<string> {
  try {
    const raw = await rawLog(input.ctx, input.supervisor, input.unit, input.env ?? process.env);
    if ('unavailable' in raw) return `controller log unavailable: ${raw.unavailable}`;
    const redactor = createRedactor(await input.ctx.secrets().catch(() => new Map()));
    const excerpt = logExcerpt(raw.text, (line) => redactor.annotation(line));
    return excerpt === null
      ? `controller log (${raw.source}): no lines (${input.supervisor === 'systemd-user' ? 'the user journal holds none for this unit' : 'the log is empty'})`
      : `controller log (${raw.source}): ${excerpt}`;
  } catch (error) {
    return `controller log unavailable: ${(error as Error).message}`;
  }
}
