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
import { existsSync, readdirSync } from 'node:fs';
import { activeFaults, fail, logCall, ok, type CliResult, type Env } from './common.js';
import { isRunning, readRun, stopRun } from './runs.js';
import {
  isTimer,
  load,
  onDisk,
  properties,
  save,
  start,
  systemdDir,
  unitDir,
  validUnit,
  type SystemdState,
} from './systemd-manager.js';

/** One `systemctl --user VERB …` call as each verb's handler sees it. */
interface VerbCall {
  env: Env;
  state: SystemdState;
  verb: string;
  /** The arguments after the verb; `enable`/`disable` take `--now` off the front. */
  rest: string[];
}

/** The call's one unit argument, or the refusal a wrong count or a bad name gets. */
function oneUnit({ verb, rest }: VerbCall): string | CliResult {
  if (rest.length !== 1) return fail(1, `fake systemctl: "${verb}" takes exactly one unit`);
  const unit = rest[0] as string;
  if (!validUnit(unit)) return fail(1, `fake systemctl: "${unit}" is not a service unit name`);
  return unit;
}

/** Takes `--now` off the front of the arguments; says whether it was there. */
function takeNow(call: VerbCall): boolean {
  const now = call.rest[0] === '--now';
  if (now) call.rest.shift();
  return now;
}

function daemonReload({ env, state, rest }: VerbCall): CliResult {
  if (rest.length) return fail(1, 'fake systemctl: daemon-reload takes no arguments');
  if (activeFaults(env).has('daemon-reload-ignored')) return ok();
  const loaded: Record<string, string> = {};
  const dir = unitDir(env);
  if (existsSync(dir)) {
    for (const name of readdirSync(dir)) {
      const content = onDisk(env, name);
      if (validUnit(name) && content !== null) loaded[name] = content;
    }
  }
  state.loaded = loaded;
  save(env, state);
  return ok();
}

async function startOrRestart(call: VerbCall): Promise<CliResult> {
  const unit = oneUnit(call);
  if (typeof unit !== 'string') return unit;
  if (call.verb === 'restart') await stopRun(systemdDir(call.env), unit);
  return start(call.env, call.state, unit, call.verb);
}

async function stop(call: VerbCall): Promise<CliResult> {
  const { env, state } = call;
  const unit = oneUnit(call);
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

async function enable(call: VerbCall): Promise<CliResult> {
  const { env, state } = call;
  const now = takeNow(call);
  const unit = oneUnit(call);
  if (typeof unit !== 'string') return unit;
  const content = onDisk(env, unit);
  if (content === null) return fail(1, `Failed to enable unit: Unit file ${unit} does not exist.`);
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

async function disable(call: VerbCall): Promise<CliResult> {
  const { env, state } = call;
  const now = takeNow(call);
  const unit = oneUnit(call);
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

function showEnvironment({ env, rest }: VerbCall): CliResult {
  if (rest.length) return fail(1, 'fake systemctl: show-environment takes no arguments');
  // The manager's environment: the fake's manager is the one of this $HOME.
  const shown = ['HOME', 'PATH', 'XDG_RUNTIME_DIR', 'LANG']
    .filter((key) => env[key] !== undefined)
    .map((key) => `${key}=${env[key] as string}\n`);
  return ok(shown.join(''));
}

function resetFailed(call: VerbCall): CliResult {
  const unit = oneUnit(call);
  if (typeof unit !== 'string') return unit;
  delete call.state.startFailed[unit];
  save(call.env, call.state);
  return ok();
}

function isActive(call: VerbCall): CliResult {
  const unit = oneUnit(call);
  if (typeof unit !== 'string') return unit;
  const active =
    properties(call.env, call.state, unit).find(([k]) => k === 'ActiveState')?.[1] ?? 'inactive';
  return { code: active === 'active' ? 0 : 3, stdout: `${active}\n`, stderr: '' };
}

function show({ env, state, rest }: VerbCall): CliResult {
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
      if (!validUnit(arg)) return fail(1, `fake systemctl: "${arg}" is not a service unit name`);
      unit = arg;
    } else return fail(1, `fake systemctl: unsupported show argument "${arg}"`);
  }
  const props = properties(env, state, unit).filter(
    ([k]) => wanted.length === 0 || wanted.includes(k),
  );
  return ok(props.map(([k, v]) => (valueOnly ? `${v}\n` : `${k}=${v}\n`)).join(''));
}

export async function systemctl(argv: string[], env: Env): Promise<CliResult> {
  logCall(systemdDir(env), ['systemctl', ...argv]);
  if (argv[0] !== '--user')
    return fail(1, 'fake systemctl: only "systemctl --user …" is supported');
  if (activeFaults(env).has('no-bus')) {
    return fail(1, 'Failed to connect to bus: No medium found');
  }
  const [verb, ...rest] = argv.slice(1);
  const call: VerbCall = { env, state: load(env), verb: verb ?? '', rest };
  switch (verb) {
    case 'daemon-reload':
      return daemonReload(call);
    case 'start':
    case 'restart':
      return startOrRestart(call);
    case 'stop':
      return stop(call);
    case 'enable':
      return enable(call);
    case 'disable':
      return disable(call);
    case 'show-environment':
      return showEnvironment(call);
    case 'reset-failed':
      return resetFailed(call);
    case 'is-active':
      return isActive(call);
    case 'show':
      return show(call);
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
