// Helpers shared by the benchmarks in bench/: timing child processes, statistics, tables.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/..). */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * The environment for timed child processes: the caller's, without variables that would change
 * what Node.js loads or prints (NODE_OPTIONS could preload code, NODE_DEBUG adds output).
 */
export function cleanEnv(extra = {}) {
  const env = { ...process.env, ...extra };
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
