/**
 * A fake `systemctl --user` (see README.md, "Fake supervisors"): it reads the real unit files in
 * `$XDG_CONFIG_HOME/systemd/user/` (default `~/.config/systemd/user/`), keeps what a user manager
 * would keep (the loaded copy of each unit, which are enabled) in `<state dir>/systemd/`, and really
 * starts and stops the process a unit's `ExecStart=` describes. Exactly these subcommands:
 *
 *   systemctl --user daemon-reload | show-environment
 *   systemctl --user start|stop|restart|enable|is-active|reset-failed UNIT
 *   systemctl --user enable|disable [--now] UNIT
 *   systemctl --user show [-p PROP[,PROP…]]… [--property=PROP[,…]]… [--value] [UNIT]
 *
 * Anything else exits non-zero. Like systemd, `start` runs the *loaded* definition: a unit file
 * changed without `daemon-reload` keeps running the old one, and `show` says `NeedDaemonReload=yes`.
 * A `.timer` unit is kept as state only: `start` (or `enable --now`) makes it active, `stop` (or
 * `disable --now`) inactive; the fake never fires it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  activeFaults,
  fail,
  logCall,
  ok,
  readJson,
  runtimeEnv,
  stateRoot,
  writeJson,
  type CliResult,
  type Env,
} from './common.js';
import { isRunning, readRun, startRun, stopRun } from './runs.js';
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

function unitDir(env: Env): string {
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

function onDisk(env: Env, unit: string): string | null {
  try {
    return readFileSync(join(unitDir(env), unit), 'utf8');
  } catch {
    return null;
  }
}

const validUnit = (name: string): boolean => /^[A-Za-z0-9:_.@-]+\.(service|timer)$/.test(name);
const isTimer = (name: string): boolean => name.endsWith('.timer');

function properties(env: Env, state: SystemdState, unit: string | null): [string, string][] {
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

async function start(
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

export async function systemctl(argv: string[], env: Env): Promise<CliResult> {
  logCall(systemdDir(env), ['systemctl', ...argv]);
  if (argv[0] !== '--user')
    return fail(1, 'fake systemctl: only "systemctl --user …" is supported');
  if (activeFaults(env).has('no-bus')) {
    return fail(1, 'Failed to connect to bus: No medium found');
  }
  const [verb, ...rest] = argv.slice(1);
  const state = load(env);
  const oneUnit = (): string | CliResult => {
    if (rest.length !== 1) return fail(1, `fake systemctl: "${verb}" takes exactly one unit`);
    const unit = rest[0] as string;
    if (!validUnit(unit)) return fail(1, `fake systemctl: "${unit}" is not a service unit name`);
    return unit;
  };
  switch (verb) {
    case 'daemon-reload': {
      if (rest.length) return fail(1, 'fake systemctl: daemon-reload takes no arguments');
      if (activeFaults(env).has('daemon-reload-ignored')) return ok();
      const loaded: Record<string, string> = {};
      const dir = unitDir(env);
      if (existsSync(dir)) {
        const { readdirSync } = await import('node:fs');
        for (const name of readdirSync(dir)) {
          const content = onDisk(env, name);
          if (validUnit(name) && content !== null) loaded[name] = content;
        }
      }
      state.loaded = loaded;
      save(env, state);
      return ok();
    }
    case 'start':
    case 'restart': {
      const unit = oneUnit();
      if (typeof unit !== 'string') return unit;
      if (verb === 'restart') await stopRun(systemdDir(env), unit);
      return start(env, state, unit, verb);
    }
    case 'stop': {
      const unit = oneUnit();
      if (typeof unit !== 'string') return unit;
      if (isTimer(unit)) {
        if (state.timers) delete state.timers[unit];
        save(env, state);
        return ok();
      }
      if (
        state.loaded[unit] === undefined &&
        state.transient?.[unit] === undefined &&
        !isRunning(readRun(systemdDir(env), unit))
      ) {
        return fail(5, `Failed to stop ${unit}: Unit ${unit} not loaded.`);
      }
      await stopRun(systemdDir(env), unit);
      delete state.startFailed[unit];
      save(env, state);
      return ok();
    }
    case 'enable': {
      const now = rest[0] === '--now';
      if (now) rest.shift();
      const unit = oneUnit();
      if (typeof unit !== 'string') return unit;
      const content = onDisk(env, unit);
      if (content === null)
        return fail(1, `Failed to enable unit: Unit file ${unit} does not exist.`);
      if (!/^\s*WantedBy=/m.test(content)) {
        return {
          code: 0,
          stdout: '',
          stderr: `The unit files have no installation config (WantedBy=, RequiredBy=, Also=,\nAlias= settings in the [Install] section, and DefaultInstance= for template\nunits). This means they are not meant to be enabled or disabled using systemctl.\n`,
        };
      }
      const already = state.enabled[unit] === true;
      state.enabled[unit] = true;
      save(env, state);
      const created = already ? '' : `Created symlink for ${unit} in default.target.wants.\n`;
      if (now) {
        const started = await start(env, state, unit, 'start');
        return { ...started, stderr: `${created}${started.stderr}` };
      }
      return { code: 0, stdout: '', stderr: created };
    }
    case 'disable': {
      const now = rest[0] === '--now';
      if (now) rest.shift();
      const unit = oneUnit();
      if (typeof unit !== 'string') return unit;
      const was = state.enabled[unit] === true;
      delete state.enabled[unit];
      if (now) {
        if (isTimer(unit)) {
          if (state.timers) delete state.timers[unit];
        } else await stopRun(systemdDir(env), unit);
      }
      save(env, state);
      return {
        code: 0,
        stdout: '',
        stderr: was ? `Removed ${unit} from default.target.wants.\n` : '',
      };
    }
    case 'show-environment': {
      if (rest.length) return fail(1, 'fake systemctl: show-environment takes no arguments');
      // The manager's environment: the fake's manager is the one of this $HOME.
      const shown = ['HOME', 'PATH', 'XDG_RUNTIME_DIR', 'LANG']
        .filter((key) => env[key] !== undefined)
        .map((key) => `${key}=${env[key] as string}\n`);
      return ok(shown.join(''));
    }
    case 'reset-failed': {
      const unit = oneUnit();
      if (typeof unit !== 'string') return unit;
      delete state.startFailed[unit];
      save(env, state);
      return ok();
    }
    case 'is-active': {
      const unit = oneUnit();
      if (typeof unit !== 'string') return unit;
      const active =
        properties(env, state, unit).find(([k]) => k === 'ActiveState')?.[1] ?? 'inactive';
      return { code: active === 'active' ? 0 : 3, stdout: `${active}\n`, stderr: '' };
    }
    case 'show': {
      const wanted: string[] = [];
      let valueOnly = false;
      let unit: string | null = null;
      for (let i = 0; i < rest.length; i += 1) {
        const arg = rest[i] as string;
        if (arg === '-p' || arg === '--property') {
          const next = rest[i + 1];
          if (next === undefined) return fail(1, 'fake systemctl: -p needs a property');
          wanted.push(...next.split(','));
          i += 1;
        } else if (arg.startsWith('--property=')) wanted.push(...arg.slice(11).split(','));
        else if (arg.startsWith('-p') && arg.length > 2) wanted.push(...arg.slice(2).split(','));
        else if (arg === '--value') valueOnly = true;
        else if (!arg.startsWith('-') && unit === null) {
          if (!validUnit(arg))
            return fail(1, `fake systemctl: "${arg}" is not a service unit name`);
          unit = arg;
        } else return fail(1, `fake systemctl: unsupported show argument "${arg}"`);
      }
      const props = properties(env, state, unit).filter(
        ([k]) => wanted.length === 0 || wanted.includes(k),
      );
      return ok(props.map(([k, v]) => (valueOnly ? `${v}\n` : `${k}=${v}\n`)).join(''));
    }
    default:
      return fail(
        1,
        `fake systemctl: unsupported command "${argv.slice(1).join(' ')}" (the fake supports daemon-reload, start, stop, restart, enable, disable, is-active, reset-failed, show, show-environment)`,
      );
  }
}

/** A fake `loginctl show-user USER (-p Linger | --property=Linger) [--value]` (the `no-linger` fault). */
export function loginctl(argv: string[], env: Env): Promise<CliResult> {
  return Promise.resolve(loginctlSync(argv, env));
}

function loginctlSync(argv: string[], env: Env): CliResult {
  logCall(systemdDir(env), ['loginctl', ...argv]);
  if (argv[0] !== 'show-user' || argv.length < 2) {
    return fail(
      1,
      `fake loginctl: only "loginctl show-user USER -p Linger [--value]" is supported`,
    );
  }
  const rest = argv.slice(2);
  const valueOnly = rest.includes('--value');
  const props = rest.filter((a) => a !== '--value');
  const asked =
    props.length === 2 && props[0] === '-p'
      ? props[1]
      : props.length === 1
        ? props[0]?.replace(/^--property=/, '')
        : undefined;
  if (asked !== 'Linger') return fail(1, 'fake loginctl: only the Linger property is supported');
  const linger = activeFaults(env).has('no-linger') ? 'no' : 'yes';
  return ok(valueOnly ? `${linger}\n` : `Linger=${linger}\n`);
}
