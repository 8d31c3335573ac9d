/**
 * What a suite holds of a running user manager (`SystemdUser`): the user, its home and runtime
 * dir, and the ways to act as it — a program run with `runuser` inside the manager's namespaces,
 * `systemctl --user`, `show`, the user's own copy of the packed CLI (unpacked on first use),
 * directories it owns. Built from a user's record once its manager answers
 * (systemd-user-launch.ts); apart from the launch because it is the suites' side of the harness.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packedRuntimeArtifact } from './artifact.js';
import { envArgs, runIn, type UserRun } from './processes.js';
import type { UserRecord } from './systemd-user-accounts.js';

export interface UserRunOptions {
  /** Added to (or overriding) the user's base environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly input?: string;
  readonly timeoutMs?: number;
}

/** The running manager and its user. */
export interface SystemdUser {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
  /** The user's home (`$HOME` of the manager: its units live in `~/.config/systemd/user`). */
  readonly home: string;
  /** `/run/user/<uid>`. */
  readonly runtimeDir: string;
  /** The `systemd --user` process. */
  readonly managerPid: number;
  /** A node binary the user can execute (the test process's own, or a copy in the home). */
  readonly node: string;
  /** The environment a process of the user gets here: HOME, USER, PATH, XDG_RUNTIME_DIR, LANG. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * The network namespace the manager (and every `run`) is in, as a path (`/run/netns/<name>`),
   * or `null` for the machine's own.
   */
  readonly netns: string | null;
  /** The mount namespace the manager (and every `run`) is in, as a path, or `null`. */
  readonly mountns: string | null;
  /**
   * Runs a program as the user (`runuser`, no shell), with the user's environment — inside the
   * manager's network and mount namespaces when it has them.
   */
  run(command: string, args: readonly string[], options?: UserRunOptions): Promise<UserRun>;
  /** `systemctl --user ARGS` as the user. */
  systemctl(...args: string[]): Promise<UserRun>;
  /** `systemctl --user show UNIT -p …` as a map. */
  show(unit: string, properties: readonly string[]): Promise<Record<string, string>>;
  /** The `fleet` entry point of the user's own copy of the packed CLI (unpacked on first use). */
  cli(): Promise<string>;
  /** Runs the user's `fleet ARGS…` as the user (plain output, no update checks). */
  fleet(args: readonly string[], options?: UserRunOptions): Promise<UserRun>;
  /** A new empty directory owned by the user, under its home (`<home>/<prefix>-<hex>`). */
  makeDir(prefix: string): string;
  /** Hands `path` (recursively) to the user. */
  chown(path: string): void;
}

export function systemdUser(
  record: UserRecord,
  home: string,
  node: string,
  env: Readonly<Record<string, string>>,
): SystemdUser {
  const { user, uid } = record;
  const gid = statSync(home).gid;
  let cliPath: Promise<string> | undefined;
  const netns = record.netns ?? null;
  const mountns = record.mountns ?? null;
  const run = (command: string, args: readonly string[], options: UserRunOptions = {}) =>
    runIn(
      { net: netns, mount: mountns },
      'runuser',
      ['-u', user, '--', 'env', '-i', ...envArgs({ ...env, ...options.env }), command, ...args],
      {
        cwd: options.cwd ?? home,
        ...(options.input === undefined ? {} : { input: options.input }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
    );
  const chown = (path: string) => {
    spawnSync('chown', ['-R', `${uid}:${gid}`, path], { stdio: 'ignore' });
  };
  const self: SystemdUser = {
    user,
    uid,
    gid,
    home,
    runtimeDir: `/run/user/${uid}`,
    managerPid: record.managerPid as number,
    node,
    env,
    netns,
    mountns,
    run,
    systemctl: (...args: string[]) => run('systemctl', ['--user', ...args]),
    show: (unit, properties) => showUnit(run, unit, properties),
    cli() {
      cliPath ??= unpackCli(home, run, chown);
      return cliPath;
    },
    async fleet(args, options = {}) {
      const bin = await self.cli();
      return run(node, [bin, ...args], {
        ...options,
        env: {
          OCLIF_SKIP_NEW_VERSION_CHECK: 'true',
          NO_COLOR: '1',
          FORCE_COLOR: '0',
          ...options.env,
        },
      });
    },
    makeDir(prefix) {
      const dir = join(home, `${prefix}-${randomBytes(4).toString('hex')}`);
      mkdirSync(dir, { mode: 0o755 });
      chownSync(dir, uid, gid);
      return dir;
    },
    chown,
  };
  return self;
}

/** `systemctl --user show UNIT` of `properties`, as a map. */
async function showUnit(
  run: SystemdUser['run'],
  unit: string,
  properties: readonly string[],
): Promise<Record<string, string>> {
  const shown = await run('systemctl', [
    '--user',
    'show',
    unit,
    `--property=${properties.join(',')}`,
  ]);
  const out: Record<string, string> = {};
  for (const line of shown.stdout.split('\n')) {
    const equals = line.indexOf('=');
    if (equals > 0) out[line.slice(0, equals)] = line.slice(equals + 1);
  }
  return out;
}

/** The packed runtime's CLI unpacked in the user's home, as the user; its `bin/run.js`. */
async function unpackCli(
  home: string,
  run: SystemdUser['run'],
  chown: (path: string) => void,
): Promise<string> {
  const artifact = await packedRuntimeArtifact();
  const dir = join(home, 'cli');
  mkdirSync(dir, { recursive: true });
  const tgz = join(dir, 'fleet-cli.tgz');
  copyFileSync(artifact.path, tgz);
  chown(dir);
  const unpacked = await run('tar', ['-xzf', tgz, '-C', dir]);
  if (unpacked.exitCode !== 0) throw new Error(`unpacking the CLI: ${unpacked.stderr}`);
  return join(dir, 'package', 'bin', 'run.js');
}
