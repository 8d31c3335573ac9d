/**
 * The systemd-user bootstrap adapter's node half (contract §12, catalogue 54): writes the unit into
 * `~/.config/systemd/user/`, and drives the user manager with `systemctl --user
 * daemon-reload|enable|start|stop|restart|show` — always through `ctx.processes`, never a shell.
 * Lingering is checked with `loginctl show-user <uid> -p Linger --value` before anything changes.
 *
 * `systemctl --user` needs the user manager's bus: the adapter passes `XDG_RUNTIME_DIR`
 * (`/run/user/<uid>`) and `DBUS_SESSION_BUS_ADDRESS` as extra environment, so it also works from a
 * controller started without a login session.
 */
import { readFile } from 'node:fs/promises';
import {
  FleetError,
  describeRuntimeCommand,
  readDefinitionFile,
  withNodeId,
  writeDefinitionFile,
  type BootstrapAdapter,
  type DefinitionFacts,
  type NodeContext,
  type ObservedSupervisor,
  type ProcessResult,
  type SupervisorDefinition,
  type SupervisorProblem,
} from '@fleet/core';
import { readUnit, systemdUnit, UNIT_NAME, UNIT_PATH } from './unit.js';

export interface SystemdUserAdapterOptions {
  /** The uid whose user manager is driven (default: this process's). */
  readonly uid?: number;
  /** How long one `systemctl` may take (default 60 s: a stop waits up to TimeoutStopSec). */
  readonly timeoutMs?: number;
}

const SHOW_PROPERTIES = [
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'UnitFileState',
  'NeedDaemonReload',
];

/** `Key=Value` lines of `systemctl show`. */
export function parseShow(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const equals = line.indexOf('=');
    if (equals > 0) out[line.slice(0, equals)] = line.slice(equals + 1).trim();
  }
  return out;
}

const excerpt = (result: ProcessResult): string =>
  (result.stderr.trim() || result.stdout.trim() || `exit ${result.exitCode}`)
    .split('\n')
    .slice(0, 4)
    .join(' / ')
    .slice(0, 500);

/** Everything observed about the unit, richer than {@link ObservedSupervisor} (for the prober). */
export interface UnitObservation extends ObservedSupervisor {
  /** What the unit file on disk says, or `null` when there is none. */
  readonly file: DefinitionFacts | null;
  readonly loadState: string;
  readonly unitFileState: string;
}

export function createSystemdUserAdapter(
  options: SystemdUserAdapterOptions = {},
): BootstrapAdapter & {
  observeUnit(ctx: NodeContext): Promise<UnitObservation>;
  linger(ctx: NodeContext): Promise<'yes' | 'no' | 'unknown'>;
} {
  const uid = options.uid ?? process.getuid?.() ?? 0;
  const runtimeDir = `/run/user/${uid}`;
  const extraEnv = {
    XDG_RUNTIME_DIR: runtimeDir,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${runtimeDir}/bus`,
  };
  const timeoutMs = options.timeoutMs ?? 60_000;

  const systemctl = (ctx: NodeContext, ...args: string[]): Promise<ProcessResult> =>
    ctx.processes.run({ command: 'systemctl', args: ['--user', ...args], extraEnv, timeoutMs });

  const must = async (
    ctx: NodeContext,
    what: string,
    ...args: string[]
  ): Promise<ProcessResult> => {
    const result = await systemctl(ctx, ...args);
    if (result.exitCode !== 0 || result.timedOut) {
      throw new FleetError(
        'ACTION_FAILED',
        `systemctl --user ${args.join(' ')} (${what}) failed: ${excerpt(result)}`,
      );
    }
    return result;
  };

  const show = async (ctx: NodeContext): Promise<Record<string, string>> =>
    parseShow(
      (
        await must(
          ctx,
          'observing the unit',
          'show',
          `--property=${SHOW_PROPERTIES.join(',')}`,
          UNIT_NAME,
        )
      ).stdout,
    );

  /** The argv of a running process, from /proc (Linux); `null` when it cannot be read. */
  const processArgv = async (pid: number): Promise<string[] | null> => {
    try {
      const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      const argv = raw.split('\0');
      if (argv[argv.length - 1] === '') argv.pop();
      return argv.length > 0 ? argv : null;
    } catch {
      return null;
    }
  };

  const adapter = {
    supervisor: 'systemd-user' as const,
    platforms: ['linux'] as const,
    pointer: 'symlink' as const,

    definition: (input: Parameters<BootstrapAdapter['definition']>[0]) => systemdUnit(input),
    readDefinition: (content: string) => readUnit(content),

    async linger(ctx: NodeContext): Promise<'yes' | 'no' | 'unknown'> {
      const result = await ctx.processes.run({
        command: 'loginctl',
        args: ['show-user', String(uid), '--property=Linger', '--value'],
        timeoutMs,
      });
      const value = result.stdout.trim();
      return result.exitCode === 0 && (value === 'yes' || value === 'no') ? value : 'unknown';
    },

    async preflight(ctx: NodeContext): Promise<readonly SupervisorProblem[]> {
      const problems: SupervisorProblem[] = [];
      const linger = await adapter.linger(ctx);
      if (linger !== 'yes') {
        problems.push({
          code: 'NO_LINGER',
          message:
            linger === 'no'
              ? `user ${uid} has no lingering: the controller unit would stop at logout (an administrator runs \`loginctl enable-linger <user>\`)`
              : `could not read the lingering of user ${uid} (loginctl show-user)`,
        });
      }
      const bus = await systemctl(ctx, 'show', '--property=Version');
      if (bus.exitCode !== 0) {
        problems.push({
          code: 'USER_BUS_UNAVAILABLE',
          message: `the user manager is not reachable (${excerpt(bus)}); is a user session or lingering set up, and ${runtimeDir} present?`,
        });
      }
      return problems;
    },

    async installDefinition(ctx: NodeContext, definition: SupervisorDefinition): Promise<void> {
      await writeDefinitionFile(ctx.home, definition);
      await must(ctx, 'reloading units', 'daemon-reload');
      await must(ctx, 'enabling the unit', 'enable', UNIT_NAME);
      const state = await show(ctx);
      if (state['LoadState'] !== 'loaded' || state['NeedDaemonReload'] !== 'no') {
        throw new FleetError(
          'ACTION_FAILED',
          `systemd did not take the new unit (LoadState=${state['LoadState'] ?? '?'}, NeedDaemonReload=${state['NeedDaemonReload'] ?? '?'} after daemon-reload)`,
        );
      }
    },

    async start(ctx: NodeContext): Promise<void> {
      await must(ctx, 'starting the controller', 'start', UNIT_NAME);
    },
    async stop(ctx: NodeContext): Promise<void> {
      await must(ctx, 'stopping the controller', 'stop', UNIT_NAME);
    },
    async restart(ctx: NodeContext): Promise<void> {
      await must(ctx, 'restarting the controller', 'restart', UNIT_NAME);
    },

    async observeUnit(ctx: NodeContext): Promise<UnitObservation> {
      const content = await readDefinitionFile(ctx.home, UNIT_PATH);
      const file = content === null ? null : readUnit(content);
      const state = await show(ctx);
      const pid = Number.parseInt(state['MainPID'] ?? '0', 10) || 0;
      const running = state['ActiveState'] === 'active' && pid > 0;
      const argv = running ? await processArgv(pid) : null;
      const fromProcess = argv ? describeRuntimeCommand(argv) : null;
      const facts =
        fromProcess && argv
          ? { generation: fromProcess.buildId, nodeIdFlag: fromProcess.nodeId, command: argv }
          : file;
      return {
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
    },

    async observe(ctx: NodeContext): Promise<ObservedSupervisor> {
      const {
        file: _file,
        loadState: _load,
        unitFileState: _state,
        ...observed
      } = await adapter.observeUnit(ctx);
      return observed;
    },

    async recordNodeId(
      ctx: NodeContext,
      nodeId: string,
    ): Promise<{ readonly previous: string | null }> {
      const content = await readDefinitionFile(ctx.home, UNIT_PATH);
      if (content === null)
        throw new FleetError(
          'ACTION_FAILED',
          `no controller unit at ${UNIT_PATH} to record --node-id in`,
        );
      const facts = readUnit(content);
      if (facts.command.length === 0)
        throw new FleetError(
          'ACTION_FAILED',
          `${UNIT_PATH} has no ExecStart= to record --node-id in`,
        );
      await adapter.installDefinition(
        ctx,
        systemdUnit({
          home: ctx.home,
          nodeId,
          command: withNodeId(facts.command, nodeId),
          environment: facts.environment,
        }),
      );
      return { previous: facts.nodeIdFlag };
    },
  };
  return adapter;
}
