/**
 * A node for adapter tests: a real temporary home, the fake `systemctl`, `loginctl` and `schtasks`
 * first on `PATH`, and a `NodeContext` whose process runner really runs them — so a bootstrap
 * adapter installs a real unit file or task XML, and a real runtime process starts and stops.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  loadEnvChain,
  type Clock,
  type NodeContext,
  type Platform,
  type SecretValues,
} from '@fleet/core';
import { FAKE_SUPERVISOR_DIR_ENV, FAKE_SUPERVISOR_FAULTS_ENV, type FakeFault } from './common.js';
import { launchdRunKey } from './launchd-domain.js';
import { fullKeyName, type FakeRegistry } from './reg.js';
import { killAllRuns, readRun, type RunRecord } from './runs.js';
import { SpawnProcessRunner } from './spawn-runner.js';

/** `packages/testkit/bin`: the fake `systemctl`, `loginctl` and `schtasks` executables. */
export const FAKE_SUPERVISOR_BIN = fileURLToPath(new URL('../../../bin', import.meta.url));

const realClock: Clock = { now: () => new Date(), monotonicMs: () => performance.now() };

export interface FakeSupervisorHostOptions {
  readonly nodeId?: string;
  /** The platform the context reports (the fakes run on any). */
  readonly platform?: Platform;
  /** Faults switched on from the start (see `FAKE_FAULTS`); change them with `setFaults`. */
  readonly faults?: readonly FakeFault[];
}

export class FakeSupervisorHost implements NodeContext {
  readonly platform: Platform;
  readonly nodeId: string;
  readonly clock = realClock;
  readonly processes: SpawnProcessRunner;
  /** Where the fakes keep their state (`FLEET_FAKE_SUPERVISOR_DIR`). */
  readonly stateDir: string;
  /** The environment the fakes run with: `PATH` starts with {@link FAKE_SUPERVISOR_BIN}. */
  readonly env: Readonly<Record<string, string>>;

  private constructor(
    readonly home: string,
    options: FakeSupervisorHostOptions,
  ) {
    this.platform = options.platform ?? 'linux';
    this.nodeId = options.nodeId ?? 'node-01';
    this.stateDir = join(home, '.fleet-fake-supervisor');
    this.env = {
      PATH: [FAKE_SUPERVISOR_BIN, process.env['PATH'] ?? '/usr/bin:/bin'].join(delimiter),
      HOME: home,
      LANG: 'C.UTF-8',
      [FAKE_SUPERVISOR_DIR_ENV]: this.stateDir,
      ...(options.faults?.length ? { [FAKE_SUPERVISOR_FAULTS_ENV]: options.faults.join(',') } : {}),
    };
    this.processes = new SpawnProcessRunner(this.env, home);
  }

  static async create(options: FakeSupervisorHostOptions = {}): Promise<FakeSupervisorHost> {
    return new FakeSupervisorHost(await mkdtemp(join(tmpdir(), 'fleet-supervised-')), options);
  }

  /** Switches faults on (replacing the previous set) for every later fake invocation. */
  async setFaults(faults: readonly FakeFault[]): Promise<void> {
    await mkdir(this.stateDir, { recursive: true });
    await writeFile(join(this.stateDir, 'faults'), faults.map((f) => `${f}\n`).join(''));
  }

  /** The run record of a systemd unit, a scheduled task or a launchd job (pid, state, exit code). */
  run(kind: 'systemd' | 'schtasks' | 'launchd', name: string): RunRecord | null {
    const key =
      kind === 'schtasks'
        ? name.replace(/^\\+/, '').toLowerCase().replace(/[\\/]/g, '__')
        : kind === 'launchd'
          ? launchdRunKey(name)
          : name;
    return readRun(join(this.stateDir, kind), key);
  }

  /**
   * The PATH launchd gives the user domain's jobs (default `/usr/bin:/bin:/usr/sbin:/sbin`), as
   * `launchctl config user path` sets it on a Mac: tests put the fakes' directory on it, where a
   * Mac has `/bin/launchctl`.
   */
  async setLaunchdPath(path: string): Promise<void> {
    await mkdir(join(this.stateDir, 'launchd'), { recursive: true });
    await writeFile(join(this.stateDir, 'launchd', 'user-path'), `${path}\n`);
  }

  /**
   * From now on the fake launchd runs its jobs as on a Mac: a Node program it starts reports
   * `process.platform === 'darwin'` (as-darwin.ts), so a real controller it runs takes its macOS
   * paths (docs/adr/0022-a-mac-node-in-tests-is-a-process-that-reports-darwin.md). launchd
   * exists only on macOS; the fake's default stays the plain process, for tests of the fake alone.
   */
  async runJobsOnMac(): Promise<void> {
    await mkdir(join(this.stateDir, 'launchd'), { recursive: true });
    await writeFile(join(this.stateDir, 'launchd', 'platform'), 'darwin\n');
  }

  /**
   * Sets a string value the fake `reg query` answers (a Windows user's or machine's environment):
   * `key` as reg.exe takes it (`HKCU\\Environment`, `HKEY_LOCAL_MACHINE\\…`).
   */
  async setRegistryValue(
    key: string,
    name: string,
    type: 'REG_SZ' | 'REG_EXPAND_SZ',
    data: string,
  ): Promise<void> {
    const full = fullKeyName(key);
    if (full === null) throw new Error(`setRegistryValue: ${key} is not under HKCU or HKLM`);
    const file = join(this.stateDir, 'registry', 'values.json');
    const registry = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as FakeRegistry;
    registry[full] = { ...registry[full], [name]: { type, data } };
    await mkdir(join(this.stateDir, 'registry'), { recursive: true });
    await writeFile(file, `${JSON.stringify(registry)}\n`);
  }

  /** Every invocation of a fake, as argv, in order. */
  async calls(kind: 'systemd' | 'schtasks' | 'launchd'): Promise<string[][]> {
    const text = await readFile(join(this.stateDir, kind, 'calls.jsonl'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);
  }

  secrets(): Promise<SecretValues> {
    return loadEnvChain(this.home);
  }

  /** Kills every runtime the fakes started, then removes the home (read-only trees included). */
  async dispose(): Promise<void> {
    killAllRuns(join(this.stateDir, 'systemd'));
    killAllRuns(join(this.stateDir, 'schtasks'));
    killAllRuns(join(this.stateDir, 'launchd'));
    await new Promise<void>((resolve) =>
      execFile('chmod', ['-R', 'u+w', this.home], () => resolve()),
    );
    // maxRetries: a monitor that is ending may still write its record while the tree goes.
    await rm(this.home, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** Shorthand for {@link FakeSupervisorHost.create}. */
export function createFakeSupervisorHost(
  options: FakeSupervisorHostOptions = {},
): Promise<FakeSupervisorHost> {
  return FakeSupervisorHost.create(options);
}
