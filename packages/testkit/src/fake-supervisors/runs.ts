/**
 * Really starting and stopping a supervised runtime, for the fake supervisors. A start spawns a
 * small monitor (`monitor.js`) detached from the fake's own process, which spawns the runtime,
 * records its pid, waits for it, records how it ended and — when the definition asks for it
 * (`Restart=on-failure`) — starts it again. The monitor's group (group.ts) is the run's control
 * group or job object: a stop signals all of it (SIGTERM, then SIGKILL), not only the runtime,
 * and waits until the monitor recorded the runtime's end and no member is left.
 *
 *   <dir>/runs/<key>.spec.json   what to run
 *   <dir>/runs/<key>.json        the run record (monitor's)
 *   <dir>/runs/<key>.stop        present while a stop is asked for
 *   <dir>/runs/<key>.log         the runtime's stdout and stderr
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { processAlive, readJson, writeJson } from './common.js';
import { groupMembers, signalGroup } from './group.js';

export interface RunSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly restart?: {
    readonly onFailure: boolean;
    /** Started again however it ended (launchd `KeepAlive` true), not only after a failure. */
    readonly always?: boolean;
    readonly delayMs: number;
    readonly max: number;
  };
  /**
   * Started again this long after each start while the run is not stopped (launchd
   * `StartInterval`); a run still going at that time is left alone and the next one waited for.
   */
  readonly intervalMs?: number;
  /**
   * The runtime leads a session and process group of its own (launchd spawns each job so: its
   * process group is what `AbandonProcessGroup` is about); otherwise it shares the monitor's.
   */
  readonly newSession?: boolean;
  /**
   * When the runtime ends, the rest of *its process group* is ended too (launchd: "When a job
   * dies, launchd kills any remaining processes with the same process group ID as the job",
   * launchd.plist(5) `AbandonProcessGroup`) — a narrower rule than `endGroupWithMain`.
   */
  readonly endProcessGroupWithMain?: boolean;
  /** The exit code recorded when the command cannot be started (systemd: 203/EXEC). */
  readonly execFailureCode: number;
  /**
   * When the runtime ends on its own, the rest of its group is ended too (a systemd service:
   * `KillMode=control-group`); a scheduled task's other processes live on until `/End`.
   */
  readonly endGroupWithMain?: boolean;
  /** Where the runtime's stdout and stderr go (default `<key>.log`; `StandardOutput=append:`). */
  readonly log?: string;
}

export interface RunRecord {
  readonly runId: string;
  readonly monitorPid: number;
  readonly pid: number | null;
  readonly state: 'starting' | 'running' | 'restarting' | 'exited';
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly restarts: number;
  /** How many times the runtime was started by its interval (launchd `runs`); absent: once. */
  readonly runs?: number;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly error?: string;
}

const MONITOR = fileURLToPath(new URL('./monitor.js', import.meta.url));

export const runPaths = (dir: string, key: string) => ({
  spec: join(dir, 'runs', `${key}.spec.json`),
  record: join(dir, 'runs', `${key}.json`),
  stop: join(dir, 'runs', `${key}.stop`),
  log: join(dir, 'runs', `${key}.log`),
});

/** The run record, corrected by observation: a record whose monitor and runtime died is `exited`. */
export function readRun(dir: string, key: string): RunRecord | null {
  const record = readJson<RunRecord | null>(runPaths(dir, key).record, null);
  if (!record || record.state === 'exited') return record;
  if (processAlive(record.monitorPid) || processAlive(record.pid)) return record;
  return {
    ...record,
    state: 'exited',
    endedAt: record.endedAt ?? new Date().toISOString(),
    error: 'monitor vanished',
  };
}

export const isRunning = (run: RunRecord | null): boolean =>
  run !== null &&
  (run.state === 'running' || run.state === 'starting' || run.state === 'restarting');

/** Starts the runtime unless it runs; resolves once it has a pid or has ended. */
export async function startRun(dir: string, key: string, spec: RunSpec): Promise<RunRecord> {
  const current = readRun(dir, key);
  if (isRunning(current)) return current as RunRecord;
  const paths = runPaths(dir, key);
  mkdirSync(join(dir, 'runs'), { recursive: true });
  rmSync(paths.stop, { force: true });
  rmSync(join(dir, 'runs', `${key}.members.json`), { force: true });
  writeJson(paths.spec, spec);
  const runId = randomBytes(8).toString('hex');
  const monitor = spawn(process.execPath, [MONITOR, dir, key, runId], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: spec.env['PATH'] ?? '/usr/bin:/bin' },
  });
  monitor.unref();
  for (let waited = 0; waited < 10_000; waited += 10) {
    const run = readJson<RunRecord | null>(paths.record, null);
    if (run?.runId === runId && run.state !== 'starting') return run;
    await sleep(10);
  }
  throw new Error(`fake supervisor: the monitor of ${key} did not report within 10 s`);
}

/**
 * Stops the run: SIGTERM to every member of its group, SIGKILL to what is left after `timeoutMs`;
 * resolves once the runtime has ended and no member of the group is left.
 */
export async function stopRun(
  dir: string,
  key: string,
  timeoutMs = 10_000,
): Promise<RunRecord | null> {
  const paths = runPaths(dir, key);
  const run = readRun(dir, key);
  if (!run) return run;
  const monitor = run.monitorPid;
  const left = () => groupMembers(dir, key, monitor).length;
  if (!isRunning(run) && left() === 0) {
    // A monitor waiting for its next interval (launchd StartInterval) must not start it again.
    if (processAlive(monitor)) writeFileSync(paths.stop, '');
    return run;
  }
  writeFileSync(paths.stop, '');
  signalGroup(dir, key, monitor, 'SIGTERM');
  for (let waited = 0; ; waited += 20) {
    const current = readRun(dir, key);
    if (!isRunning(current) && left() === 0) return current;
    if (waited === timeoutMs) signalGroup(dir, key, monitor, 'SIGKILL');
    if (waited > timeoutMs + 5_000) {
      if (processAlive(monitor)) process.kill(monitor, 'SIGKILL');
      return readRun(dir, key);
    }
    if (waited % 500 === 0 && waited < timeoutMs) signalGroup(dir, key, monitor, 'SIGTERM');
    await sleep(20);
  }
}

/** Test cleanup: kills every runtime, every member of its group and its monitor, hard. */
export function killAllRuns(dir: string): void {
  const runs = join(dir, 'runs');
  if (!existsSync(runs)) return;
  for (const name of readdirSync(runs)) {
    if (!name.endsWith('.json') || name.endsWith('.spec.json') || name.endsWith('.members.json'))
      continue;
    const key = name.slice(0, -5);
    writeFileSync(runPaths(dir, key).stop, '');
    const run = readJson<RunRecord | null>(join(runs, name), null);
    if (run?.monitorPid) signalGroup(dir, key, run.monitorPid, 'SIGKILL');
    for (const pid of [run?.pid, run?.monitorPid]) {
      if (pid && processAlive(pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }
}
