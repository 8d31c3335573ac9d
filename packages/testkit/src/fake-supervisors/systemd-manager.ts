/**
 * The fake user manager behind the fake `systemctl` and `systemd-run` (see README.md, "Fake
 * supervisors"): its state (the loaded copy of each unit, which are enabled) in
 * `<state dir>/systemd/`, the unit files it reads, the properties `show` reports and what `start`
 * really runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  activeFaults,
  fail,
  ok,
  readJson,
  runtimeEnv,
  stateRoot,
  writeJson,
  type CliResult,
  type Env,
} from './common.js';
import { isRunning, readRun, startRun } from './runs.js';
import {
  parseEnvironment,
  parseExecStart,
  parseTimespan,
  parseUnitFile,
  UnitFileError,
  unitValue,
  unitValues,
} from './unit-file.js';

interface SystemdState {
  /** Unit name → the unit file's content when `daemon-reload` last ran. */
  loaded: Record<string, string>;
  enabled: Record<string, boolean>;
  /** Units whose last start failed before a process ran (`start-fails`). */
  startFailed: Record<string, boolean>;
  /** Timer units that are started (active). */
  timers?: Record<string, boolean>;
  /** Transient services started by `systemd-run` (true: `--collect`, forgotten once ended). */
  transient?: Record<string, boolean>;
}

const FAKE_VERSION = '252 (fleet-fake)';

export type { SystemdState };

export function systemdDir(env: Env): string {
  return join(stateRoot(env), 'systemd');
}

export function unitDir(env: Env): string {
  const config = env['XDG_CONFIG_HOME'] || join(env['HOME'] ?? '', '.config');
  return join(config, 'systemd', 'user');
}

export function load(env: Env): SystemdState {
  return readJson<SystemdState>(join(systemdDir(env), 'state.json'), {
    loaded: {},
    enabled: {},
    startFailed: {},
  });
}

export function save(env: Env, state: SystemdState): void {
  writeJson(join(systemdDir(env), 'state.json'), state);
}

export function onDisk(env: Env, unit: string): string | null {
  try {
    return readFileSync(join(unitDir(env), unit), 'utf8');
  } catch {
    return null;
  }
}

export const validUnit = (name: string): boolean =>
  /^[A-Za-z0-9:_.@-]+\.(service|timer)$/.test(name);
export const isTimer = (name: string): boolean => name.endsWith('.timer');

export function properties(env: Env, state: SystemdState, unit: string | null): [string, string][] {
  if (unit === null) {
    return [
      ['Version', FAKE_VERSION],
      ['Architecture', process.arch],
      ['UnitPath', unitDir(env)],
    ];
  }
  const run = readRun(systemdDir(env), unit);
  const transient = state.transient?.[unit];
  if (transient !== undefined && !(transient && !isRunning(run))) {
    return [
      ['Id', unit],
      ['LoadState', 'loaded'],
      ['ActiveState', isRunning(run) ? 'active' : 'inactive'],
      ['SubState', isRunning(run) ? 'running' : 'dead'],
      ['MainPID', String(isRunning(run) ? (run?.pid ?? 0) : 0)],
      ['ExecMainStatus', String(run?.exitCode ?? 0)],
      ['Transient', 'yes'],
    ];
  }
  const loaded = state.loaded[unit];
  const disk = onDisk(env, unit);
  let active = 'inactive';
  let sub = 'dead';
  if (isTimer(unit)) {
    if (state.timers?.[unit]) [active, sub] = ['active', 'waiting'];
  } else if (run?.state === 'running' || run?.state === 'starting')
    [active, sub] = ['active', 'running'];
  else if (run?.state === 'restarting') [active, sub] = ['activating', 'auto-restart'];
  else if (state.startFailed[unit]) [active, sub] = ['failed', 'failed'];
  else if (
    run?.state === 'exited' &&
    ((run.signal !== null && run.signal !== 'SIGTERM') || (run.exitCode ?? 0) !== 0)
  ) {
    [active, sub] = ['failed', 'failed'];
  }
  const pid = isRunning(run) && run?.state === 'running' ? (run.pid ?? 0) : 0;
  let execStart = '';
  if (loaded !== undefined) {
    try {
      const parsed = parseUnitFile(loaded);
      const argv = parseExecStart(
        unitValue(parsed, 'Service', 'ExecStart') ?? '',
        specifiersOf(env),
        {},
      );
      execStart = `{ path=${argv[0]} ; argv[]=${argv.join(' ')} ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=${pid} ; code=(null) ; status=0/0 }`;
    } catch {
      execStart = '';
    }
  }
  return [
    ['Id', unit],
    ['LoadState', loaded !== undefined ? 'loaded' : 'not-found'],
    ['ActiveState', active],
    ['SubState', sub],
    ['MainPID', String(pid)],
    ['ExecMainPID', String(run?.pid ?? 0)],
    ['ExecMainStatus', String(run?.exitCode ?? 0)],
    ['NRestarts', String(run?.restarts ?? 0)],
    [
      'UnitFileState',
      loaded === undefined && disk === null ? '' : state.enabled[unit] ? 'enabled' : 'disabled',
    ],
    [
      'NeedDaemonReload',
      disk !== null && disk !== loaded
        ? 'yes'
        : loaded !== undefined && disk === null
          ? 'yes'
          : 'no',
    ],
    ['FragmentPath', loaded !== undefined ? join(unitDir(env), unit) : ''],
    ['ExecStart', execStart],
  ];
}

function specifiersOf(env: Env): Record<string, string> {
  return { h: env['HOME'] ?? '', t: env['XDG_RUNTIME_DIR'] ?? '' };
}

export async function start(
  env: Env,
  state: SystemdState,
  unit: string,
  verb: string,
): Promise<CliResult> {
  const loaded = state.loaded[unit];
  if (loaded === undefined) return fail(5, `Failed to ${verb} ${unit}: Unit ${unit} not found.`);
  if (isTimer(unit)) {
    state.timers = { ...state.timers, [unit]: true };
    save(env, state);
    return ok();
  }
  let warning = '';
  if (onDisk(env, unit) !== loaded) {
    warning = `Warning: The unit file, source configuration file or drop-ins of ${unit} changed on disk. Run 'systemctl --user daemon-reload' to reload units.\n`;
  }
  if (activeFaults(env).has('start-fails')) {
    state.startFailed[unit] = true;
    save(env, state);
    return fail(
      1,
      `${warning}Job for ${unit} failed because the control process exited with error code.\nSee "systemctl --user status ${unit}" and "journalctl --user -xeu ${unit}" for details.`,
    );
  }
  let spec;
  try {
    const parsed = parseUnitFile(loaded);
    const type = unitValue(parsed, 'Service', 'Type') ?? 'simple';
    if (type !== 'simple' && type !== 'exec')
      throw new UnitFileError(`Type=${type} is not supported by the fake`);
    if (unitValues(parsed, 'Service', 'ExecStart').length !== 1)
      throw new UnitFileError('exactly one ExecStart= is supported');
    const specifiers = specifiersOf(env);
    const environment = parseEnvironment(unitValues(parsed, 'Service', 'Environment'), specifiers);
    const argv = parseExecStart(
      unitValue(parsed, 'Service', 'ExecStart') as string,
      specifiers,
      environment,
    );
    const cwd = unitValue(parsed, 'Service', 'WorkingDirectory') ?? env['HOME'] ?? '/';
    const restart = unitValue(parsed, 'Service', 'Restart') ?? 'no';
    spec = {
      command: argv[0] as string,
      args: argv.slice(1),
      env: runtimeEnv(env, environment),
      cwd: cwd.startsWith('~') ? join(env['HOME'] ?? '', cwd.slice(1)) : cwd,
      restart: {
        onFailure: restart === 'on-failure' || restart === 'always',
        delayMs: Math.min(
          parseTimespan(unitValue(parsed, 'Service', 'RestartSec') ?? '100ms'),
          200,
        ),
        max: 5,
      },
      execFailureCode: 203,
      endGroupWithMain: true,
    };
  } catch (error) {
    if (error instanceof UnitFileError)
      return fail(1, `${warning}Failed to ${verb} ${unit}: ${error.message}`);
    throw error;
  }
  delete state.startFailed[unit];
  save(env, state);
  const run = await startRun(systemdDir(env), unit, spec);
  if (run.state === 'exited' && spec.command && run.error) {
    // Type=exec: a command that cannot be executed fails the start job.
    return fail(
      1,
      `${warning}Job for ${unit} failed because the control process exited with error code.`,
    );
  }
  return { code: 0, stdout: '', stderr: warning };
}
