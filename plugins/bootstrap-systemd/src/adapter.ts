/**
 * The systemd-user bootstrap adapter's node half (contract §12, catalogue 54): writes the unit into
 * `~/.config/systemd/user/` of the node's home, and drives the user manager with `systemctl --user
 * daemon-reload|link|enable|start|stop|restart|show` — always through `ctx.processes`, never a
 * shell. Lingering is checked before anything changes.
 *
 * `systemctl --user` needs the user manager's bus: the adapter passes `XDG_RUNTIME_DIR`
 * (`/run/user/<uid>`) and `DBUS_SESSION_BUS_ADDRESS` as extra environment, so it also works from a
 * controller started without a login session (an SSH forced command).
 *
 * Which unit: the one the node recorded when it was installed (`supervisor.json`, written here by
 * `installDefinition`), else `fleet-controller.service`. A node whose home is not the manager's
 * `$HOME` (a lab host, a controller with `--home /srv/node`) keeps its unit file in its own home and
 * links it into the manager's search path (`systemctl --user link`); the manager must then load
 * exactly that file (`FragmentPath`), never another node's unit of the same name.
 */
import { readFile, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import {
  FleetError,
  describeRuntimeCommand,
  homePath,
  readDefinitionFile,
  readSupervisorRecord,
  SUPERVISOR_RECORD_PATH,
  withNodeId,
  writeDefinitionFile,
  writeSupervisorRecord,
  type BootstrapAdapter,
  type DefinitionFacts,
  type DetachedJob,
  type DetachedLaunch,
  type NodeContext,
  type ObservedSupervisor,
  type SupervisorDefinition,
  type SupervisorProblem,
} from '@fleet/core/plugin';
import { excerpt, launchTransientUnit, linger, processCgroupUnit } from './manager.js';

export { parseShow } from './manager.js';
import { readUnit, systemdUnit, UNIT_DIR, UNIT_NAME, unitPath } from './unit.js';
import { realOrSelf, UserManager } from './user-manager.js';

export interface SystemdUserAdapterOptions {
  /** The uid whose user manager is driven (default: this process's). */
  readonly uid?: number;
  /** How long one `systemctl` may take (default 60 s: a stop waits up to TimeoutStopSec). */
  readonly timeoutMs?: number;
  /** The unit when the node records none (default `fleet-controller.service`). */
  readonly unit?: string;
}

/** Everything observed about the unit, richer than {@link ObservedSupervisor} (for the prober). */
export interface UnitObservation extends ObservedSupervisor {
  /** The unit (`fleet-controller.service`, or the one the node recorded). */
  readonly unit: string;
  /** What the unit file on disk says, or `null` when there is none. */
  readonly file: DefinitionFacts | null;
  readonly loadState: string;
  readonly unitFileState: string;
}

export type SystemdUserAdapter = BootstrapAdapter & {
  launchDetached(ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch>;
  uninstall(ctx: NodeContext): Promise<void>;
  observeUnit(ctx: NodeContext): Promise<UnitObservation>;
  linger(ctx: NodeContext): Promise<'yes' | 'no' | 'unknown'>;
  /** The unit this node's controller runs as. */
  unitName(ctx: NodeContext): Promise<string>;
};

/** The argv of a running process, from /proc (Linux); `null` when it cannot be read. */
async function processArgv(pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    const argv = raw.split('\0');
    if (argv[argv.length - 1] === '') argv.pop();
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}

/** The unit the node recorded for its controller, else the default. */
async function recordedUnit(ctx: NodeContext, defaultUnit: string): Promise<string> {
  const record = await readSupervisorRecord(ctx.home);
  return record?.supervisor === 'systemd-user' ? record.name : defaultUnit;
}

/** Why this node's controller could not run under its user manager (nothing when it can). */
async function preflightProblems(
  manager: UserManager,
  ctx: NodeContext,
  lingering: 'yes' | 'no' | 'unknown',
  unit: string,
): Promise<SupervisorProblem[]> {
  const { uid, runtimeDir, timeoutMs } = manager;
  const problems: SupervisorProblem[] = [];
  if (lingering !== 'yes') {
    problems.push({
      code: 'NO_LINGER',
      message:
        lingering === 'no'
          ? `user ${uid} has no lingering: the controller unit would stop at logout (an administrator runs \`loginctl enable-linger <user>\`)`
          : `could not read the lingering of user ${uid} (loginctl show-user, /var/lib/systemd/linger)`,
    });
  }
  const bus = await manager.systemctl(ctx, 'show', '--property=Version');
  if (bus.exitCode !== 0) {
    problems.push({
      code: 'USER_BUS_UNAVAILABLE',
      message: `the user manager is not reachable (${excerpt(bus)}); is a user session or lingering set up, and ${runtimeDir} present?`,
    });
  }
  // A restart of the unit ends its whole control group: from inside it, the runner must be
  // able to leave it (docs/runtime-lifecycle.md, "The runner leaves the cgroup").
  if ((await processCgroupUnit()) === unit) {
    const run = await ctx.processes.run({ command: 'systemd-run', args: ['--version'], timeoutMs });
    if (run.exitCode !== 0) {
      problems.push({
        code: 'RUNNER_CANNOT_LEAVE_UNIT',
        message: `this controller runs inside ${unit}, whose restart ends every process of it, and systemd-run is not usable (${excerpt(run)}): the runner could not outlive the restart`,
      });
    }
  }
  return problems;
}

/** Writes the unit, makes the manager load exactly that file, enables it and records it. */
async function installUnit(
  manager: UserManager,
  ctx: NodeContext,
  definition: SupervisorDefinition,
): Promise<void> {
  const unit = basename(definition.path);
  if (definition.path !== unitPath(unit) || !/\.service$/.test(unit)) {
    throw new FleetError(
      'USAGE',
      `a systemd user unit lives in ${UNIT_DIR}/<name>.service, not ${definition.path}`,
    );
  }
  const file = await writeDefinitionFile(ctx.home, definition);
  await manager.reachable(ctx, file);
  await manager.must(ctx, 'reloading units', 'daemon-reload');
  await manager.must(ctx, 'enabling the unit', 'enable', unit);
  const state = await manager.show(ctx, unit, ['LoadState', 'NeedDaemonReload', 'FragmentPath']);
  if (state['LoadState'] !== 'loaded' || state['NeedDaemonReload'] !== 'no') {
    throw new FleetError(
      'ACTION_FAILED',
      `systemd did not take the new unit (LoadState=${state['LoadState'] ?? '?'}, NeedDaemonReload=${state['NeedDaemonReload'] ?? '?'} after daemon-reload)`,
    );
  }
  const loaded = await realOrSelf(state['FragmentPath'] ?? '');
  if (loaded !== (await realOrSelf(file))) {
    throw new FleetError(
      'ACTION_FAILED',
      `the user manager loads ${unit} from ${state['FragmentPath'] || '(nowhere)'}, not from ${file}: another unit of that name is in its search path`,
    );
  }
  await writeSupervisorRecord(ctx.home, {
    supervisor: 'systemd-user',
    name: unit,
    definition: definition.path,
  });
}

/**
 * What `systemctl show` (`state`), the unit file (`file`) and the running process's argv (`argv`,
 * null when not running or unreadable) say together: the process wins over the file.
 */
export function unitObservation(
  unit: string,
  file: DefinitionFacts | null,
  state: Readonly<Record<string, string>>,
  argv: readonly string[] | null,
): UnitObservation {
  const pid = Number.parseInt(state['MainPID'] ?? '0', 10) || 0;
  const running = state['ActiveState'] === 'active' && pid > 0;
  const fromProcess = argv ? describeRuntimeCommand([...argv]) : null;
  const facts =
    fromProcess && argv
      ? { generation: fromProcess.buildId, nodeIdFlag: fromProcess.nodeId, command: [...argv] }
      : file;
  return {
    unit,
    present: state['LoadState'] === 'loaded',
    enabled: state['UnitFileState'] === 'enabled',
    running,
    state: `${state['ActiveState'] ?? 'unknown'} (${state['SubState'] ?? '?'})`,
    ...(pid > 0 ? { pid } : {}),
    ...(facts?.generation ? { generation: facts.generation } : {}),
    ...(facts?.nodeIdFlag ? { nodeIdFlag: facts.nodeIdFlag } : {}),
    ...(facts && facts.command.length > 0 ? { command: facts.command } : {}),
    ...(facts ? { source: argv ? ('process' as const) : ('file' as const) } : {}),
    needsReload: state['NeedDaemonReload'] === 'yes',
    file,
    loadState: state['LoadState'] ?? 'unknown',
    unitFileState: state['UnitFileState'] ?? '',
  };
}

async function observeUnit(
  manager: UserManager,
  ctx: NodeContext,
  unit: string,
): Promise<UnitObservation> {
  const content = await readDefinitionFile(ctx.home, unitPath(unit));
  const file = content === null ? null : readUnit(content);
  const state = await manager.show(ctx, unit);
  const pid = Number.parseInt(state['MainPID'] ?? '0', 10) || 0;
  const running = state['ActiveState'] === 'active' && pid > 0;
  return unitObservation(unit, file, state, running ? await processArgv(pid) : null);
}

/** The unit with `--node-id` changed in its ExecStart=, for installDefinition; and the old id. */
async function unitWithNodeId(
  ctx: NodeContext,
  unit: string,
  nodeId: string,
): Promise<{ readonly definition: SupervisorDefinition; readonly previous: string | null }> {
  const content = await readDefinitionFile(ctx.home, unitPath(unit));
  if (content === null)
    throw new FleetError(
      'ACTION_FAILED',
      `no controller unit at ${unitPath(unit)} to record --node-id in`,
    );
  const facts = readUnit(content);
  if (facts.command.length === 0)
    throw new FleetError(
      'ACTION_FAILED',
      `${unitPath(unit)} has no ExecStart= to record --node-id in`,
    );
  const definition = systemdUnit(
    {
      home: ctx.home,
      nodeId,
      command: withNodeId(facts.command, nodeId),
      environment: facts.environment,
    },
    unit,
  );
  return { definition, previous: facts.nodeIdFlag };
}

async function uninstallUnit(manager: UserManager, ctx: NodeContext, unit: string): Promise<void> {
  const state = await manager.show(ctx, unit, ['LoadState']);
  if (state['LoadState'] === 'loaded') {
    await manager.must(ctx, 'stopping the controller', 'stop', unit);
    // disable removes the [Install] links and a `systemctl link` of the file alike.
    await manager.must(ctx, 'disabling the unit', 'disable', unit);
  }
  await rm(homePath(ctx.home, unitPath(unit)), { force: true });
  await manager.must(ctx, 'reloading units', 'daemon-reload');
  const record = await readSupervisorRecord(ctx.home);
  if (record?.supervisor === 'systemd-user' && record.name === unit) {
    await rm(homePath(ctx.home, SUPERVISOR_RECORD_PATH), { force: true });
  }
}

export function createSystemdUserAdapter(
  options: SystemdUserAdapterOptions = {},
): SystemdUserAdapter {
  const manager = new UserManager(
    options.uid ?? process.getuid?.() ?? 0,
    options.timeoutMs ?? 60_000,
  );
  const defaultUnit = options.unit ?? UNIT_NAME;
  const unitName = (ctx: NodeContext) => recordedUnit(ctx, defaultUnit);
  const adapter: SystemdUserAdapter = {
    supervisor: 'systemd-user' as const,
    platforms: ['linux'] as const,
    pointer: 'symlink' as const,
    definition: (input) => systemdUnit(input, input.name ?? defaultUnit),
    readDefinition: (content: string) => readUnit(content),
    unitName,
    linger: (ctx) => linger(ctx, manager.uid, manager.timeoutMs),
    preflight: async (ctx) =>
      preflightProblems(manager, ctx, await adapter.linger(ctx), await unitName(ctx)),
    installDefinition: (ctx, definition) => installUnit(manager, ctx, definition),
    // A unit that hit its start limit (a crash loop) refuses every start until it is reset: a
    // start or restart fleet asks for (a rollback after a failed switch) resets it first.
    async start(ctx: NodeContext): Promise<void> {
      const unit = await unitName(ctx);
      await manager.systemctl(ctx, 'reset-failed', unit);
      await manager.must(ctx, 'starting the controller', 'start', unit);
    },
    async stop(ctx: NodeContext): Promise<void> {
      await manager.must(ctx, 'stopping the controller', 'stop', await unitName(ctx));
    },
    async restart(ctx: NodeContext): Promise<void> {
      const unit = await unitName(ctx);
      await manager.systemctl(ctx, 'reset-failed', unit);
      await manager.must(ctx, 'restarting the controller', 'restart', unit);
    },
    observeUnit: async (ctx) => observeUnit(manager, ctx, await unitName(ctx)),
    async observe(ctx: NodeContext): Promise<ObservedSupervisor> {
      const {
        unit: _unit,
        file: _file,
        loadState: _load,
        unitFileState: _state,
        ...observed
      } = await adapter.observeUnit(ctx);
      return observed;
    },
    async recordNodeId(ctx, nodeId): Promise<{ readonly previous: string | null }> {
      const { definition, previous } = await unitWithNodeId(ctx, await unitName(ctx), nodeId);
      await adapter.installDefinition(ctx, definition);
      return { previous };
    },
    launchDetached: async (ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch> =>
      launchTransientUnit(ctx, job, {
        controllerUnit: await unitName(ctx),
        extraEnv: { ...manager.extraEnv, ...(await manager.managerEnv(ctx)) },
        timeoutMs: manager.timeoutMs,
        systemctl: manager.systemctl,
      }),
    uninstall: async (ctx) => uninstallUnit(manager, ctx, await unitName(ctx)),
  };
  return adapter;
}
