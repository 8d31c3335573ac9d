/**
 * `fleet controller runtime-run` without oclif or the CLI, as `controller serve` (main.ts): the
 * CLI's `bin/run.js` hands it here before it imports oclif. The runner is started by the controller
 * (lifecycle/spawn.ts) or the SSH recovery receiver for every upgrade, rollback and resume
 * (contract §12); it then loads only the transaction's code and the node's own registry
 * (registry.ts) — not oclif, the CLI's commands, or plugins an operator installed into oclif's data
 * directory, which no node process may run.
 *
 * Flags are those of the oclif command (`packages/cli/src/commands/controller/runtime-run.ts`,
 * which still serves `--help`); a usage error is exit 2 with one line, a fleet error keeps its
 * code and exit code (contract §7).
 */
import { appendFileSync } from 'node:fs';
import { realpath, writeFile } from 'node:fs/promises';
import { waitForGo } from '../lifecycle/go-signal.js';
import { runRuntimeTransaction } from '../lifecycle/runner.js';
import { parseEntryArgs, requireKind, usage } from './flags.js';
import { loadServeRegistry, type ServeMainOptions } from './registry.js';
import { reportFailure } from './report.js';

export type RuntimeRunMode = 'activate' | 'rollback' | 'resume';

export interface RuntimeRunFlags {
  readonly home: string;
  readonly mode: RuntimeRunMode;
  /** The transaction id (activate, resume) or a label (rollback). */
  readonly transaction: string;
  readonly acceptanceTimeoutMs?: number;
  /** Begin once this file exists (the controller writes it after its answer). */
  readonly goFile?: string;
  /** Or once this process (the one that started the runner) has ended. */
  readonly waitPid?: number;
  /** Write this process's id here first. */
  readonly pidFile?: string;
  /** Append progress lines here instead of stdout (a supervisor that cannot redirect: a task). */
  readonly logFile?: string;
}

const MODES: readonly RuntimeRunMode[] = ['activate', 'rollback', 'resume'];

function integerFlag(name: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw usage(`--${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(text)}`);
  }
  return value;
}

/** Parses and checks the flags of `controller runtime-run` (pure but for the `--home` check). */
export async function parseRuntimeRunFlags(argv: readonly string[]): Promise<RuntimeRunFlags> {
  const { text } = parseEntryArgs(argv, {
    strings: [
      'home',
      'mode',
      'transaction',
      'acceptance-timeout-ms',
      'go-file',
      'wait-pid',
      'pid-file',
      'log-file',
    ],
    required: ['home', 'mode', 'transaction'],
  });
  const mode = MODES.find((candidate) => candidate === text('mode'));
  if (mode === undefined) {
    throw usage(`--mode must be one of ${MODES.join(', ')}, not ${JSON.stringify(text('mode'))}`);
  }
  const home = text('home') as string;
  await requireKind('home', home, 'directory');
  const timeout = text('acceptance-timeout-ms');
  const waitPid = text('wait-pid');
  const goFile = text('go-file');
  const pidFile = text('pid-file');
  const logFile = text('log-file');
  return {
    home,
    mode,
    transaction: text('transaction') as string,
    ...(timeout === undefined
      ? {}
      : { acceptanceTimeoutMs: integerFlag('acceptance-timeout-ms', timeout, 1000, 600_000) }),
    ...(goFile === undefined ? {} : { goFile }),
    ...(waitPid === undefined
      ? {}
      : { waitPid: integerFlag('wait-pid', waitPid, 1, Number.MAX_SAFE_INTEGER) }),
    ...(pidFile === undefined ? {} : { pidFile }),
    ...(logFile === undefined ? {} : { logFile }),
  };
}

/** One timestamped progress line, to the log file when there is one, else to stdout. */
function progressLog(logFile: string | undefined): (line: string) => void {
  return (line) => {
    const text = `[${new Date().toISOString()}] ${line}\n`;
    if (logFile !== undefined) appendFileSync(logFile, text, { mode: 0o600 });
    else process.stdout.write(text);
  };
}

/** Waits for its go, then carries the transaction; every step goes to the progress log. */
async function carryTransaction(flags: RuntimeRunFlags, options: ServeMainOptions): Promise<void> {
  const log = progressLog(flags.logFile);
  if (flags.pidFile !== undefined) {
    await writeFile(flags.pidFile, `${process.pid}\n`, { mode: 0o600 });
  }
  const waits = flags.goFile !== undefined || flags.waitPid !== undefined;
  const go = await waitForGo({
    ...(flags.goFile === undefined ? {} : { goFile: flags.goFile }),
    ...(flags.waitPid === undefined ? {} : { waitPid: flags.waitPid }),
    timeoutMs: waits ? 30_000 : 0,
  });
  const registry = await loadServeRegistry({ ...options, home: flags.home });
  log(`runner ${process.pid}: ${flags.mode} ${flags.transaction} (${go})`);
  try {
    const outcome = await runRuntimeTransaction({
      home: await realpath(flags.home),
      registry,
      mode: flags.mode,
      transaction: flags.transaction,
      ...(flags.acceptanceTimeoutMs === undefined
        ? {}
        : { acceptanceTimeoutMs: flags.acceptanceTimeoutMs }),
      log,
    });
    log(`transaction ${outcome.transaction} ended: ${outcome.outcome}`);
  } catch (error) {
    log(`runner failed: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
}

/**
 * Runs `controller runtime-run` with `argv` (the arguments after `controller runtime-run`).
 * Resolves when the transaction has ended; the exit code is in `process.exitCode`.
 */
export async function runControllerRuntimeRun(
  argv: readonly string[],
  options: ServeMainOptions,
): Promise<void> {
  try {
    await carryTransaction(await parseRuntimeRunFlags(argv), options);
  } catch (error) {
    reportFailure(error, false);
  }
}
