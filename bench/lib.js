// Helpers shared by the benchmarks in bench/: timing child processes, statistics, tables.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/..). */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

let emptyRuntime;

/**
 * An empty runtime directory of this bench run's own (0700): where a fleet call looks for the
 * operator's resident process and finds none, so a row measures a call in its own process as fleet
 * runs by default — the look included — and never a resident the person running the bench has
 * started (docs/resident.md).
 */
function noResidentRuntime() {
  if (emptyRuntime === undefined) {
    emptyRuntime = mkdtempSync(path.join(tmpdir(), 'fleet-bench-runtime-'));
    chmodSync(emptyRuntime, 0o700);
    process.once('exit', () => rmSync(emptyRuntime, { recursive: true, force: true }));
  }
  return emptyRuntime;
}

/**
 * The environment for timed child processes: the caller's, without variables that would change
 * what Node.js loads or prints (NODE_OPTIONS could preload code, NODE_DEBUG adds output). A fleet
 * call runs as fleet does by default (`FLEET_RESIDENT` unset: use a resident, never start one) in
 * an empty runtime directory, so in its own process, unless a row asks for the resident
 * ({@link withAutoStartedResident}).
 */
export function cleanEnv(extra = {}) {
  const env = { ...process.env, XDG_RUNTIME_DIR: noResidentRuntime(), ...extra };
  if (extra.FLEET_RESIDENT === undefined) delete env.FLEET_RESIDENT;
  delete env.NODE_OPTIONS;
  delete env.NODE_DEBUG;
  return env;
}

/**
 * Runs `node ...args` once with spawnSync and returns its wall time in milliseconds (spawn to
 * exit, measured with process.hrtime.bigint()) with its exit status and output.
 */
export function timeNode(args, { cwd = repoRoot, env = cleanEnv() } = {}) {
  const start = process.hrtime.bigint();
  const child = spawnSync(process.execPath, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (child.error) throw child.error;
  return {
    ms,
    status: child.status,
    signal: child.signal,
    stdout: child.stdout,
    stderr: child.stderr,
  };
}

export function median(values) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function summarize(samples) {
  return {
    medianMs: median(samples),
    minMs: Math.min(...samples),
    maxMs: Math.max(...samples),
  };
}

/** Rounds for display and JSON (0.1 ms is far below the noise of a process start). */
export function round(value, digits = 1) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * Renders rows as a plain-text table. `columns`: [{ key, label, align: 'left' | 'right' }];
 * `rows`: objects whose values are already strings.
 */
export function renderTable(columns, rows) {
  const widths = columns.map((c) =>
    Math.max(c.label.length, ...rows.map((r) => String(r[c.key] ?? '').length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) =>
        columns[i].align === 'right' ? cell.padStart(widths[i]) : cell.padEnd(widths[i]),
      )
      .join('  ')
      .trimEnd();
  return [
    line(columns.map((c) => c.label)),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(columns.map((c) => String(r[c.key] ?? '')))),
  ].join('\n');
}

/**
 * Runs `command ...args` once with spawnSync and returns its wall time in milliseconds with its
 * exit status and output (any program: a peer tool, or `node` with the CLI).
 */
export function timeCommand(command, args, { cwd = repoRoot, env = cleanEnv(), input } = {}) {
  const start = process.hrtime.bigint();
  const child = spawnSync(command, args, {
    cwd,
    env,
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (child.error) throw child.error;
  return {
    ms,
    status: child.status,
    signal: child.signal,
    stdout: child.stdout,
    stderr: child.stderr,
  };
}

/** Whether `command` is on the PATH (a peer tool of a comparison row). */
export function onPath(command) {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() !== '';
}

/**
 * Times two sides of a comparison interleaved — A, B, B, A, A, B… (the order alternates, so a
 * slow patch of the machine or a warm cache favours neither) — after `warmups` untimed rounds.
 * `prepare(side)` runs before each side's run, untimed (resetting a drifted state). Each side is a
 * function returning `{ ms }` that throws when the run's result is wrong.
 */
export function interleave({ runs, warmups = 1, a, b, prepare = () => undefined }) {
  const samples = { a: [], b: [] };
  for (let i = 0; i < warmups + runs; i += 1) {
    const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const side of order) {
      prepare(side);
      const { ms } = (side === 'a' ? a : b)();
      if (i >= warmups) samples[side].push(ms);
    }
  }
  return samples;
}

/**
 * One goal row of contract §14: the ratio of two medians measured in the same run, against a goal
 * (a ratio not to exceed). `fleet` and `peer` are sample arrays (ms) with labels. Without a goal,
 * a reference row: measured and shown beside the goals, never `OVER`, left out of the summary.
 */
export function ratioRow({ id, label, workload, fleet, peer, goal, note, unit = 'ms' }) {
  const f = summarize(fleet.samples);
  const p = summarize(peer.samples);
  const ratio = f.medianMs / p.medianMs;
  return {
    id,
    label,
    workload,
    fleet: {
      label: fleet.label,
      ...roundStats(f),
      samplesMs: fleet.samples.map((s) => round(s, 1)),
    },
    peer: { label: peer.label, ...roundStats(p), samplesMs: peer.samples.map((s) => round(s, 1)) },
    unit,
    ratio: round(ratio, 3),
    goal,
    status: goal === undefined ? 'reference' : ratio <= goal ? 'ok' : 'OVER',
    ...(note ? { note } : {}),
  };
}

/** Whether a row has a goal of contract §14 (not a reference row). */
export const hasGoal = (row) => row.goal !== undefined || row.goalMs !== undefined;

/**
 * A goal row measured as a difference: what `fleet` (the case with the extra work) adds to
 * `peer`'s median, against a goal in milliseconds.
 */
export function deltaRow({ id, label, workload, fleet, peer, goalMs, note }) {
  const f = summarize(fleet.samples);
  const p = summarize(peer.samples);
  const delta = f.medianMs - p.medianMs;
  return {
    id,
    label,
    workload,
    fleet: {
      label: fleet.label,
      ...roundStats(f),
      samplesMs: fleet.samples.map((s) => round(s, 1)),
    },
    peer: { label: peer.label, ...roundStats(p), samplesMs: peer.samples.map((s) => round(s, 1)) },
    deltaMs: round(delta),
    goalMs,
    status: delta <= goalMs ? 'ok' : 'OVER',
    ...(note ? { note } : {}),
  };
}

/** A goal row that could not be measured, and why. */
export function skippedRow({ id, label, workload, goal, reason }) {
  return { id, label, workload, goal, status: 'skipped', reason };
}

function roundStats(stats) {
  return { medianMs: round(stats.medianMs), minMs: round(stats.minMs), maxMs: round(stats.maxMs) };
}

const goalText = (row) =>
  row.goalMs !== undefined
    ? `≤ +${row.goalMs} ms`
    : row.goal !== undefined
      ? `≤ ${row.goal}×`
      : '—';

/** The text table of goal rows (every benchmark's, and the summary of bench/run.js). */
export function renderGoalRows(rows) {
  const range = (s) => `${s.minMs.toFixed(0)}–${s.maxMs.toFixed(0)}`;
  return renderTable(
    [
      { key: 'label', label: 'contract §14 goal' },
      { key: 'fleet', label: 'fleet' },
      { key: 'fm', label: 'median', align: 'right' },
      { key: 'fr', label: 'min–max', align: 'right' },
      { key: 'peer', label: 'against' },
      { key: 'pm', label: 'median', align: 'right' },
      { key: 'pr', label: 'min–max', align: 'right' },
      { key: 'ratio', label: 'ratio', align: 'right' },
      { key: 'goal', label: 'goal', align: 'right' },
      { key: 'status', label: 'result' },
    ],
    rows.map((row) =>
      row.status === 'skipped'
        ? {
            label: row.label,
            goal: goalText(row),
            status: `skipped (${row.reason})`,
          }
        : {
            label: row.label,
            fleet: row.fleet.label,
            fm: `${row.fleet.medianMs.toFixed(1)} ${row.unit ?? 'ms'}`,
            fr: range(row.fleet),
            peer: row.peer.label,
            pm: `${row.peer.medianMs.toFixed(1)} ${row.unit ?? 'ms'}`,
            pr: range(row.peer),
            ratio:
              row.deltaMs === undefined
                ? `${row.ratio.toFixed(3)}×`
                : `${row.deltaMs >= 0 ? '+' : ''}${row.deltaMs.toFixed(1)} ms`,
            goal: goalText(row),
            status: row.status,
          },
    ),
  );
}

const BUNDLE_FILE = /\/(?:packages\/core|node_modules\/@fleet\/core)\/dist\/bundle\/(.+\.c?js)$/;
const bundleInputsCache = new Map();

/**
 * The modules bundled into a file of @fleet/core's bundle (`dist/src/…` for core's own,
 * `node_modules/…` for a dependency's), from the `inputs.json` the bundle step writes beside it;
 * `null` for a URL outside the bundle. A trace of loaded files sees only the bundle's files: this
 * says what is inside them.
 */
export function bundledModules(url) {
  const match = BUNDLE_FILE.exec(url);
  if (!match) return null;
  const file = fileURLToPath(url);
  const inputsFile = path.join(file.slice(0, file.length - match[1].length), 'inputs.json');
  if (!bundleInputsCache.has(inputsFile)) {
    bundleInputsCache.set(inputsFile, JSON.parse(readFileSync(inputsFile, 'utf8')));
  }
  const inputs = bundleInputsCache.get(inputsFile)[match[1]];
  if (!inputs) throw new Error(`${inputsFile} does not list ${match[1]}: rebuild the bundle`);
  return inputs;
}

/**
 * Runs `fn` with the operator's resident process as `FLEET_RESIDENT=auto` runs it
 * (docs/resident.md): `first`, the rows' first call, finds no resident in a runtime directory of
 * `work`'s own, runs in its own process and starts one as it ends; `fn` gets the rows' environment
 * and that first call's time once the resident listens. The resident is stopped after.
 */
export async function withAutoStartedResident(cli, work, env, first, fn) {
  const runtime = path.join(work, 'resident-runtime');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  chmodSync(runtime, 0o700);
  const residentEnv = cleanEnv({
    OCLIF_SKIP_NEW_VERSION_CHECK: 'true',
    ...env,
    XDG_RUNTIME_DIR: runtime,
    FLEET_RESIDENT: 'auto',
  });
  const fleet = (args) =>
    spawnSync(process.execPath, [cli, ...args], { env: residentEnv, encoding: 'utf8' });
  const status = () => {
    const run = fleet(['resident', 'status', '--json']);
    return run.status === 0 && JSON.parse(run.stdout).running === true;
  };
  if (status()) throw new Error(`a resident runs already in ${runtime}`);
  const call = timeCommand(process.execPath, [cli, ...first.args], { env: residentEnv });
  try {
    if (!first.accept.includes(call.status))
      throw new Error(`fleet ${first.args.join(' ')} exited ${call.status}: ${call.stderr}`);
    const until = Date.now() + 30_000;
    while (!status()) {
      if (Date.now() > until) throw new Error('no resident listened 30 s after the first call');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return await fn(residentEnv, call.ms);
  } finally {
    fleet(['resident', 'stop']);
  }
}
