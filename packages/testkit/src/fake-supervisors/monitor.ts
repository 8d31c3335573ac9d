/**
 * The fake supervisors' monitor: one per started runtime, detached from the fake CLI that started
 * it. It spawns the runtime (stdout and stderr to the run's log), records its pid, waits for it and
 * records how it ended; with `restart.onFailure` it starts a runtime that failed again, up to
 * `restart.max` times. A stop is asked for by the `.stop` file (see runs.ts).
 *
 *   node monitor.js <dir> <key> <runId>
 */
import { spawn } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJson, writeJson } from './common.js';
import { groupMembers, processGroupMembers, recordMembers, signalGroup } from './group.js';
import { runPaths, type RunRecord, type RunSpec } from './runs.js';

const [dir, key, runId] = process.argv.slice(2) as [string, string, string];
const paths = runPaths(dir, key);
const spec = readJson<RunSpec | null>(paths.spec, null);
let record: RunRecord = {
  runId,
  monitorPid: process.pid,
  pid: null,
  state: 'starting',
  exitCode: null,
  signal: null,
  restarts: 0,
  startedAt: new Date().toISOString(),
  endedAt: null,
};
const save = (patch: Partial<RunRecord>): void => {
  record = { ...record, ...patch };
  try {
    writeJson(paths.record, record, { createDirectory: false });
  } catch (error) {
    // The state directory is gone (see checkOrphaned): never made again from here.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    checkOrphaned();
  }
};

/** Runs the runtime once; resolves with how it ended. */
function once(
  run: RunSpec,
): Promise<{ code: number | null; signal: string | null; error?: string }> {
  return new Promise((resolve) => {
    const log = openSync(run.log ?? paths.log, 'a');
    const child = spawn(run.command, [...run.args], {
      cwd: run.cwd,
      env: { ...run.env },
      stdio: ['ignore', log, log],
      detached: run.newSession === true,
    });
    child.once('spawn', () =>
      save({ pid: child.pid ?? null, state: 'running', exitCode: null, signal: null }),
    );
    child.once('error', (error) =>
      resolve({ code: run.execFailureCode, signal: null, error: error.message }),
    );
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/**
 * A run whose fake supervisor state is gone (its `runs` directory removed with the test's home)
 * has no manager left to stop it: it ends its group and itself, as units end with their user
 * manager, instead of outliving the test that started it.
 */
let orphaned = false;
function checkOrphaned(): void {
  if (orphaned || existsSync(`${dir}/runs`)) return;
  orphaned = true;
  signalGroup(dir, key, process.pid, 'SIGKILL');
  process.exit(1);
}

// The group: every process below this monitor, recorded as it appears (group.ts).
const watch = setInterval(() => {
  checkOrphaned();
  recordMembers(dir, key, process.pid);
}, 50);

/** What systemd does when a service's main process is gone: the rest of the group goes too. */
async function endGroup(): Promise<void> {
  if (signalGroup(dir, key, process.pid, 'SIGTERM') === 0) return;
  for (let waited = 0; waited < 5_000; waited += 50) {
    await sleep(50);
    if (groupMembers(dir, key, process.pid).length === 0) return;
  }
  signalGroup(dir, key, process.pid, 'SIGKILL');
}

/** What launchd does when a job's process is gone: the rest of its process group goes too. */
async function endProcessGroup(leader: number | null): Promise<void> {
  if (leader === null) return;
  const signal = (name: NodeJS.Signals): number => {
    const members = processGroupMembers(dir, key, process.pid, leader);
    for (const pid of members) {
      try {
        process.kill(pid, name);
      } catch {
        // gone between the read and the signal
      }
    }
    return members.length;
  };
  if (signal('SIGTERM') === 0) return;
  for (let waited = 0; waited < 5_000; waited += 50) {
    await sleep(50);
    if (processGroupMembers(dir, key, process.pid, leader).length === 0) return;
  }
  signal('SIGKILL');
}

/** Waits for the next `StartInterval` tick after `startedAt`; false when a stop came first. */
async function nextInterval(intervalMs: number, startedAt: number): Promise<boolean> {
  const due = startedAt + Math.ceil((Date.now() - startedAt + 1) / intervalMs) * intervalMs;
  while (Date.now() < due) {
    if (existsSync(paths.stop)) return false;
    // A new start of the run (kickstart) has its own monitor: this one is done.
    if (readJson<RunRecord | null>(paths.record, null)?.runId !== runId) return false;
    await sleep(Math.min(50, due - Date.now()));
  }
  return !existsSync(paths.stop);
}

if (!spec) {
  save({ state: 'exited', exitCode: 1, endedAt: new Date().toISOString(), error: 'no run spec' });
} else {
  save({});
  for (;;) {
    const startedAt = Date.now();
    const ended = await once(spec);
    recordMembers(dir, key, process.pid);
    if (spec.endGroupWithMain === true) await endGroup();
    if (spec.endProcessGroupWithMain === true) await endProcessGroup(record.pid);
    const failed = ended.error !== undefined || ended.signal !== null || ended.code !== 0;
    const again =
      (failed || spec.restart?.always === true) &&
      !existsSync(paths.stop) &&
      spec.restart?.onFailure === true &&
      record.restarts < spec.restart.max;
    if (!again && spec.intervalMs !== undefined && !existsSync(paths.stop)) {
      // launchd: a job with StartInterval stays loaded and is started again at the next tick.
      save({
        state: 'exited',
        pid: record.pid,
        exitCode: ended.code,
        signal: ended.signal,
        endedAt: new Date().toISOString(),
        ...(ended.error ? { error: ended.error } : {}),
      });
      if (!(await nextInterval(spec.intervalMs, startedAt))) break;
      save({ runs: (record.runs ?? 1) + 1, endedAt: null });
      continue;
    }
    if (!again) {
      save({
        state: 'exited',
        pid: record.pid,
        exitCode: ended.code,
        signal: ended.signal,
        endedAt: new Date().toISOString(),
        ...(ended.error ? { error: ended.error } : {}),
      });
      break;
    }
    save({
      state: 'restarting',
      exitCode: ended.code,
      signal: ended.signal,
      restarts: record.restarts + 1,
    });
    await sleep(spec.restart?.delayMs ?? 100);
    if (existsSync(paths.stop)) {
      save({ state: 'exited', endedAt: new Date().toISOString() });
      break;
    }
  }
}
clearInterval(watch);
