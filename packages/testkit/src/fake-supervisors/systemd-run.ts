/**
 * A fake `systemd-run --user` (see README.md, "Fake supervisors"), beside the fake `systemctl`: it
 * starts a command as a transient service of its own — its own monitor, hence its own group
 * (group.ts), which a restart of another unit does not end — exactly as the runtime runner and
 * the `--node-id` switch leave the controller's control group. Exactly this form:
 *
 *   systemd-run --user --unit=NAME [--collect] [--quiet] [--working-directory=DIR]
 *               [--property=StandardOutput=append:FILE] [--property=StandardError=append:FILE]
 *               [--setenv=NAME[=VALUE]]… [--] COMMAND [ARG…]
 *   systemd-run --version
 *
 * `--setenv=NAME` takes the value from systemd-run's own environment, as systemd's does. A name
 * already in use fails, as systemd's does. Anything else (`--scope`, `--pipe`, timers…) exits 1.
 */
import { isAbsolute, join } from 'node:path';
import { activeFaults, fail, logCall, ok, runtimeEnv, type CliResult, type Env } from './common.js';
import { isRunning, readRun, startRun } from './runs.js';
import { load, save, systemdDir } from './systemd-manager.js';

const UNIT = /^[A-Za-z0-9:_.@-]+\.service$/;

export async function systemdRun(argv: string[], env: Env): Promise<CliResult> {
  logCall(systemdDir(env), ['systemd-run', ...argv]);
  if (argv.length === 1 && argv[0] === '--version') return ok('systemd 252 (fleet-fake)\n');
  if (argv[0] !== '--user')
    return fail(1, 'fake systemd-run: only "systemd-run --user …" is supported');
  if (activeFaults(env).has('no-bus')) return fail(1, 'Failed to connect to bus: No medium found');
  let unit: string | undefined;
  let collect = false;
  let cwd = env['HOME'] ?? '/';
  let log: string | undefined;
  const setenv: Record<string, string> = {};
  let index = 1;
  for (; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '--') {
      index += 1;
      break;
    }
    if (!arg.startsWith('-')) break;
    if (arg.startsWith('--unit=')) unit = arg.slice('--unit='.length);
    else if (arg === '--collect') collect = true;
    else if (arg === '--quiet') continue;
    else if (arg.startsWith('--working-directory=')) cwd = arg.slice('--working-directory='.length);
    else if (/^--property=Standard(Output|Error)=append:/.test(arg)) {
      const path = arg.slice(arg.indexOf('append:') + 'append:'.length);
      if (!isAbsolute(path)) return fail(1, `Failed to parse ${arg}: not an absolute path`);
      log = path;
    } else if (arg.startsWith('--setenv=')) {
      const assignment = arg.slice('--setenv='.length);
      const equals = assignment.indexOf('=');
      if (equals > 0) setenv[assignment.slice(0, equals)] = assignment.slice(equals + 1);
      else if (env[assignment] !== undefined) setenv[assignment] = env[assignment];
    } else return fail(1, `fake systemd-run: unsupported option "${arg}"`);
  }
  const command = argv.slice(index);
  if (unit === undefined || !UNIT.test(unit))
    return fail(1, 'fake systemd-run: --unit=NAME.service is required');
  if (command.length === 0 || !isAbsolute(command[0] as string))
    return fail(1, 'fake systemd-run: an absolute command is required');
  const state = load(env);
  if (state.loaded[unit] !== undefined || isRunning(readRun(systemdDir(env), unit))) {
    return fail(
      1,
      `Failed to start transient service unit: Unit ${unit} was already loaded or has a fragment file.`,
    );
  }
  state.transient = { ...state.transient, [unit]: collect };
  save(env, state);
  const run = await startRun(systemdDir(env), unit, {
    command: command[0] as string,
    args: command.slice(1),
    env: runtimeEnv({ PATH: env['PATH'], HOME: env['HOME'] }, setenv),
    cwd: cwd.startsWith('~') ? join(env['HOME'] ?? '', cwd.slice(1)) : cwd,
    execFailureCode: 203,
    endGroupWithMain: true,
    ...(log ? { log } : {}),
  });
  if (run.state === 'exited' && run.error) {
    return fail(1, `Failed to start transient service unit: ${run.error}`);
  }
  return ok();
}
