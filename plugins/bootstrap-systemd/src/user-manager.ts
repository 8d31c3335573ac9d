/**
 * One uid's `systemctl --user`, as the systemd-user adapter drives it (contract §12): always
 * through `ctx.processes`, never a shell, with the user manager's bus passed as extra environment
 * (`XDG_RUNTIME_DIR`, `DBUS_SESSION_BUS_ADDRESS`) so it also works from a controller started without
 * a login session (an SSH forced command).
 */
import { realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FleetError, type NodeContext, type ProcessResult } from '@fleet/core/plugin';
import { excerpt, parseShow, type SystemctlRunner } from './manager.js';

export const SHOW_PROPERTIES = [
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'UnitFileState',
  'NeedDaemonReload',
];

export const realOrSelf = (path: string): Promise<string> => realpath(path).catch(() => path);

export class UserManager {
  readonly runtimeDir: string;
  /** The bus of the user manager, for every `systemctl --user`. */
  readonly extraEnv: Readonly<Record<string, string>>;
  /**
   * `systemctl --user` computes the unit search path (where `link` and `enable` write) from its own
   * `$HOME`: it must be the manager's, not the node's home. The manager says which
   * (`show-environment`); asked once per context.
   */
  private readonly managerHome = new WeakMap<NodeContext, Promise<Record<string, string>>>();

  constructor(
    readonly uid: number,
    readonly timeoutMs: number,
  ) {
    this.runtimeDir = `/run/user/${uid}`;
    this.extraEnv = {
      XDG_RUNTIME_DIR: this.runtimeDir,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${this.runtimeDir}/bus`,
    };
  }

  private async askManagerHome(ctx: NodeContext): Promise<Record<string, string>> {
    const result = await ctx.processes.run({
      command: 'systemctl',
      args: ['--user', 'show-environment'],
      extraEnv: this.extraEnv,
      timeoutMs: this.timeoutMs,
    });
    const home = /^HOME=(.+)$/m.exec(result.stdout)?.[1];
    if (result.exitCode !== 0 || home === undefined) {
      this.managerHome.delete(ctx); // not reachable now: ask again next time
      return {};
    }
    return { HOME: home };
  }

  /** The manager's bus and `$HOME`, the environment every `systemctl --user` runs with. */
  managerEnv(ctx: NodeContext): Promise<Record<string, string>> {
    let asked = this.managerHome.get(ctx);
    if (asked === undefined) {
      asked = this.askManagerHome(ctx);
      this.managerHome.set(ctx, asked);
    }
    return asked;
  }

  /** `systemctl --user ARGS`, whatever it exits with. */
  readonly systemctl: SystemctlRunner = async (ctx, ...args) =>
    ctx.processes.run({
      command: 'systemctl',
      args: ['--user', ...args],
      extraEnv: { ...this.extraEnv, ...(await this.managerEnv(ctx)) },
      timeoutMs: this.timeoutMs,
    });

  /** `systemctl --user ARGS`, refused (ACTION_FAILED, saying `what`) unless it succeeds. */
  async must(ctx: NodeContext, what: string, ...args: string[]): Promise<ProcessResult> {
    const result = await this.systemctl(ctx, ...args);
    if (result.exitCode !== 0 || result.timedOut) {
      throw new FleetError(
        'ACTION_FAILED',
        `systemctl --user ${args.join(' ')} (${what}) failed: ${excerpt(result)}`,
      );
    }
    return result;
  }

  async show(
    ctx: NodeContext,
    unit: string,
    properties = SHOW_PROPERTIES,
  ): Promise<Record<string, string>> {
    const args = ['show', `--property=${properties.join(',')}`, unit];
    return parseShow((await this.must(ctx, 'observing the unit', ...args)).stdout);
  }

  /**
   * Makes the manager find the unit file: a file outside its search path (`UnitPath`) is linked
   * into it. Idempotent; refuses (systemd does) when another file of that name is there.
   */
  async reachable(ctx: NodeContext, file: string): Promise<void> {
    const { UnitPath: unitPaths = '' } = parseShow(
      (await this.must(ctx, 'reading the unit search path', 'show', '--property=UnitPath')).stdout,
    );
    const dir = await realOrSelf(dirname(file));
    const searched = await Promise.all(unitPaths.split(/\s+/).filter(Boolean).map(realOrSelf));
    if (!searched.includes(dir)) await this.must(ctx, 'linking the unit', 'link', file);
  }
}
