// The controller (contract §14): a real `fleet controller serve` process on loopback over a temp home
// holding a 10 KiB managed file (~/.claude/CLAUDE.md, on harness-policy's allowlist), asked
// through the operator's own client (core's createControllerClient: one connection per request,
// every answer schema-checked, as `fleet` does it). Goals: export p50 ≤ 5 ms over 500 sequential
// requests after a warm-up; 200 concurrent exports without an error; idle RSS ≤ 80 MiB (VmRSS of
// the controller process, after a few seconds without requests). Also measured: 200 concurrent
// snapshots (each audited as a read, the records written in groups).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { cleanEnv, renderTable, repoRoot, round } from './lib.js';

const { CONTROLLER_NODE_OPTIONS } = await import(
  pathToFileURL(path.join(repoRoot, 'packages/core/dist/src/index.js')).href
);

export const name = 'controller';
export const description =
  'controller export latency (10 KiB file), 200 concurrent requests, idle RSS (contract §14)';

const CLI = path.join(repoRoot, 'packages/cli/bin/run.js');
const FILE = '~/.claude/CLAUDE.md';
const FILE_BYTES = 10 * 1024;
const SEQUENTIAL = 500;
const WARMUP = 50;
const CONCURRENT = 200;
const IDLE_MS = 3000;
const GOAL_P50_MS = 5;
const GOAL_ERRORS = 0;
const GOAL_RSS_MIB = 80;

const env = () => cleanEnv({ OCLIF_SKIP_NEW_VERSION_CHECK: 'true' });

function fleetSync(args) {
  const child = spawnSync(process.execPath, [CLI, ...args], { env: env(), encoding: 'utf8' });
  if (child.error) throw child.error;
  if (child.status !== 0) {
    throw new Error(
      `fleet ${args.slice(0, 2).join(' ')} exited ${child.status}: ${child.stderr.slice(0, 500)}`,
    );
  }
  return child.stdout;
}

/** Starts `fleet controller serve … --port 0 --json` and waits for its one JSON line. */
function serve(home) {
  const child = spawn(
    process.execPath,
    // Started as every supervisor starts it (core's CONTROLLER_NODE_OPTIONS).
    [
      ...CONTROLLER_NODE_OPTIONS,
      CLI,
      'controller',
      'serve',
      '--home',
      home,
      '--node-id',
      'bench',
      '--port',
      '0',
      '--json',
    ],
    { env: env(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
  const started = new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(
      () => reject(new Error(`the controller did not start in 30 s: ${stderr.slice(0, 500)}`)),
      30_000,
    );
    child.stdout.on('data', (chunk) => {
      stdout += chunk.toString('utf8');
      const newline = stdout.indexOf('\n');
      if (newline === -1) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout.slice(0, newline)));
      } catch (error) {
        reject(error);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `the controller exited (${code ?? signal}) before it was ready: ${stderr.slice(0, 500)}`,
        ),
      );
    });
  });
  return { child, started };
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** VmRSS of a process in MiB (Linux /proc); `null` elsewhere. */
function rssMiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** A 10 KiB markdown file of ordinary policy lines. */
function policyFile() {
  const lines = ['# Harness policy (benchmark)', ''];
  for (let i = 1; lines.join('\n').length < FILE_BYTES; i += 1) {
    lines.push(
      `- rule ${String(i).padStart(3, '0')}: keep changes small, tested and reviewed before they land.`,
    );
  }
  return `${lines.join('\n')}\n`.slice(0, FILE_BYTES - 1) + '\n';
}

export async function run() {
  const core = await import(
    pathToFileURL(path.join(repoRoot, 'packages/core/dist/src/index.js')).href
  );
  const home = mkdtempSync(path.join(tmpdir(), 'fleet-bench-controller-'));
  let controller;
  try {
    const issued = JSON.parse(
      fleetSync([
        'token',
        'issue',
        '--home',
        home,
        '--client',
        'bench',
        '--scope',
        'config:read',
        '--json',
      ]),
    );
    // The node's own policy (contract §5.1): a controller does not start without one.
    fleetSync(['node-policy', 'init', '--home', home]);
    const content = policyFile();
    const sha256 = createHash('sha256').update(content).digest('hex');
    const file = path.join(home, '.claude', 'CLAUDE.md');
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, content, { mode: 0o600 });

    controller = serve(home);
    const started = await controller.started;
    const pid = started.pid;
    const client = core.createControllerClient({
      host: 'bench',
      url: started.url,
      token: issued.token,
    });
    const checks = [];
    const exportOnce = async () => {
      const answer = await client.export({ path: FILE });
      if (!answer.exists || answer.sha256 !== sha256 || answer.content !== content) {
        throw new Error('the export did not answer the file as written');
      }
    };

    await sleep(IDLE_MS);
    const rssStarted = rssMiB(pid);

    for (let i = 0; i < WARMUP; i += 1) await exportOnce();
    const samples = [];
    for (let i = 0; i < SEQUENTIAL; i += 1) {
      const start = process.hrtime.bigint();
      await exportOnce();
      samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    samples.sort((a, b) => a - b);
    checks.push({
      label: 'sequential exports',
      ok: true,
      detail: `${SEQUENTIAL} answered with the file's bytes`,
    });

    const burstStart = process.hrtime.bigint();
    const outcomes = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, () => exportOnce()),
    );
    const burstMs = Number(process.hrtime.bigint() - burstStart) / 1e6;
    const failures = outcomes.filter((o) => o.status === 'rejected');
    const errors = failures.length;
    const firstError = failures[0]?.reason?.code ?? failures[0]?.reason?.message;

    // 200 concurrent snapshots, as a 200-host drift would ask one node at once were it 200
    // operators: each a read audited with one record, written in groups (docs/audit-log.md).
    const auditPath = path.join(home, '.local', 'state', 'fleet', 'audit.jsonl');
    const auditLines = () => {
      try {
        return readFileSync(auditPath, 'utf8')
          .split('\n')
          .filter((line) => line.includes('"operation":"snapshot"')).length;
      } catch {
        return 0;
      }
    };
    const recordsBefore = auditLines();
    const snapshotStart = process.hrtime.bigint();
    const snapshots = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, () => client.snapshot({ paths: [FILE], backups: true })),
    );
    const snapshotMs = Number(process.hrtime.bigint() - snapshotStart) / 1e6;
    const snapshotErrors = snapshots.filter((o) => o.status === 'rejected').length;

    await sleep(IDLE_MS);
    const rssIdle = rssMiB(pid);
    const readRecords = auditLines() - recordsBefore;
    checks.push({
      label: 'every snapshot audited',
      ok: readRecords === CONCURRENT - snapshotErrors,
      detail: `${readRecords} read records for ${CONCURRENT - snapshotErrors} snapshots`,
    });
    const alive = controller.child.exitCode === null && controller.child.signalCode === null;
    checks.push({
      label: 'controller alive after the burst',
      ok: alive,
      detail: alive ? `pid ${pid}` : 'it exited',
    });

    const measurements = [
      {
        metric: `export p50 (${SEQUENTIAL} sequential)`,
        value: round(percentile(samples, 50), 2),
        unit: 'ms',
        goal: GOAL_P50_MS,
      },
      {
        metric: `export p95 (${SEQUENTIAL} sequential)`,
        value: round(percentile(samples, 95), 2),
        unit: 'ms',
        goal: null,
      },
      {
        metric: `export max (${SEQUENTIAL} sequential)`,
        value: round(samples[samples.length - 1], 2),
        unit: 'ms',
        goal: null,
      },
      {
        metric: `${CONCURRENT} concurrent exports: errors`,
        value: errors,
        unit: '',
        goal: GOAL_ERRORS,
        detail: firstError ? `first: ${firstError}` : `wall ${round(burstMs)} ms`,
      },
      {
        metric: `${CONCURRENT} concurrent snapshots: wall`,
        value: round(snapshotMs),
        unit: 'ms',
        goal: null,
        detail: `${snapshotErrors} error(s)`,
      },
      {
        metric: `idle RSS after start (${IDLE_MS / 1000} s idle)`,
        value: rssStarted === null ? null : round(rssStarted),
        unit: 'MiB',
        goal: GOAL_RSS_MIB,
      },
      {
        metric: `idle RSS after the load (${IDLE_MS / 1000} s idle)`,
        value: rssIdle === null ? null : round(rssIdle),
        unit: 'MiB',
        goal: GOAL_RSS_MIB,
      },
    ].map((m) => ({
      ...m,
      status: m.goal === null || m.value === null ? null : m.value <= m.goal ? 'PASS' : 'OVER',
    }));
    return {
      name,
      description,
      ok: checks.every((c) => c.ok),
      over: measurements.some((m) => m.status === 'OVER'),
      fileBytes: Buffer.byteLength(content),
      measurements,
      checks,
    };
  } finally {
    if (controller) await stop(controller.child);
    rmSync(home, { recursive: true, force: true });
  }
}

export function format(result) {
  const columns = [
    { key: 'metric', label: 'metric', align: 'left' },
    { key: 'value', label: 'value', align: 'right' },
    { key: 'goal', label: 'goal', align: 'right' },
    { key: 'result', label: 'result', align: 'left' },
    { key: 'detail', label: '', align: 'left' },
  ];
  const show = (value, unit) =>
    value === null ? 'n/a' : unit ? `${value} ${unit}` : String(value);
  const rows = result.measurements.map((m) => ({
    metric: m.metric,
    value: show(m.value, m.unit),
    goal: m.goal === null ? '' : m.unit ? `≤ ${m.goal} ${m.unit}` : `${m.goal}`,
    result: m.status ?? '',
    detail: m.detail ?? '',
  }));
  return [
    `a real \`fleet controller serve\` on 127.0.0.1, a ${result.fileBytes}-byte file, core's client (one connection per request)`,
    '',
    renderTable(columns, rows),
    '',
    ...result.checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'}  ${c.label}: ${c.detail}`),
  ].join('\n');
}
