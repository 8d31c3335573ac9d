// The controller (contract §14): a real `fleet controller serve` process on loopback over a temp home
// holding a 10 KiB managed file (~/.claude/CLAUDE.md, on harness-policy's allowlist), asked
// through the operator's own client (core's createControllerClient: one keep-alive connection,
// every answer schema-checked, as `fleet` does it). Goals: export p50 ≤ 5 ms over 500 sequential
// requests after a warm-up; 200 concurrent exports without an error; idle RSS after that burst
// ≤ 1.4× a bare `node:http` server's (VmRSS after a few seconds without requests), the bare
// server started with the same Node options, given the same burst of 200 concurrent requests for
// a 10 KiB answer, in the same run: three rounds, fresh processes each.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { cleanEnv, ratioRow, renderGoalRows, renderTable, repoRoot, round } from './lib.js';

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
const GOAL_RSS_RATIO = 1.4;
const ROUNDS = 3;

// A bare node:http server: answers every request with a 10 KiB JSON body; prints its port.
const BARE_SERVER = `
const http = require('node:http');
const body = JSON.stringify({ content: 'x'.repeat(${FILE_BYTES}) });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`;

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
  return start([
    // Started as every supervisor starts it (core's CONTROLLER_NODE_OPTIONS).
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
  ]);
}

/** Starts the bare server, with the controller's Node options; resolves with its port line. */
function serveBare() {
  return start([...CONTROLLER_NODE_OPTIONS, '-e', BARE_SERVER]);
}

function start(args) {
  const child = spawn(process.execPath, args, { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
  const started = new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(
      () => reject(new Error(`the server did not start in 60 s: ${stderr.slice(0, 500)}`)),
      60_000,
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
          `the server exited (${code ?? signal}) before it was ready: ${stderr.slice(0, 500)}`,
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

/** 200 requests at once to the bare server, each on its own connection, as the burst below. */
async function bareBurst(port) {
  const http = await import('node:http');
  const once = () =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
  for (let i = 0; i < WARMUP; i += 1) await once();
  const outcomes = await Promise.allSettled(Array.from({ length: CONCURRENT }, () => once()));
  return outcomes.filter((o) => o.status === 'rejected').length;
}

export async function run() {
  const core = await import(
    pathToFileURL(path.join(repoRoot, 'packages/core/dist/src/index.js')).href
  );
  const home = mkdtempSync(path.join(tmpdir(), 'fleet-bench-controller-'));
  const running = [];
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

    const checks = [];
    const rss = { started: [], fleet: [], bare: [] };
    let samples = [];
    let errors = 0;
    let firstError;
    let burstMs = 0;
    let snapshotMs = 0;
    let snapshotErrors = 0;
    // The snapshot reads the audit log holds: it counts reads and writes the counts as records per
    // client and interval (`aggregate.count`; docs/audit-log.md "Reads") — at the interval's end,
    // before a write, or when the controller stops, which is when round 0 looks.
    const auditPath = path.join(home, '.local', 'state', 'fleet', 'audit.jsonl');
    const auditedReads = () => {
      try {
        return readFileSync(auditPath, 'utf8')
          .split('\n')
          .filter((line) => line.includes('"operation":"snapshot"'))
          .reduce((sum, line) => sum + (JSON.parse(line).aggregate?.count ?? 1), 0);
      } catch {
        return 0;
      }
    };
    let readsBefore = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const controller = serve(home);
      running.push(controller.child);
      const bare = serveBare();
      running.push(bare.child);
      const started = await controller.started;
      const barePort = Number(await bare.started);
      const pid = started.pid;
      const client = core.createControllerClient({
        host: 'bench',
        url: started.url,
        token: issued.token,
      });
      const exportOnce = async () => {
        const answer = await client.export({ path: FILE });
        if (!answer.exists || answer.sha256 !== sha256 || answer.content !== content) {
          throw new Error('the export did not answer the file as written');
        }
      };
      await sleep(IDLE_MS);
      rss.started.push(rssMiB(pid));

      for (let i = 0; i < WARMUP; i += 1) await exportOnce();
      if (round === 0) {
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
      }
      const burstStart = process.hrtime.bigint();
      const outcomes = await Promise.allSettled(
        Array.from({ length: CONCURRENT }, () => exportOnce()),
      );
      if (round === 0) burstMs = Number(process.hrtime.bigint() - burstStart) / 1e6;
      const failures = outcomes.filter((o) => o.status === 'rejected');
      errors += failures.length;
      firstError ??= failures[0]?.reason?.code ?? failures[0]?.reason?.message;
      if (round === 0) {
        // 200 concurrent snapshots, as a 200-host drift would ask one node at once were it 200
        // operators: every read audited (counted after the controller stops, below).
        readsBefore = auditedReads();
        const snapshotStart = process.hrtime.bigint();
        const snapshots = await Promise.allSettled(
          Array.from({ length: CONCURRENT }, () =>
            client.snapshot({ files: [{ domain: 'harness-policy', path: FILE }], backups: true }),
          ),
        );
        snapshotMs = Number(process.hrtime.bigint() - snapshotStart) / 1e6;
        snapshotErrors = snapshots.filter((o) => o.status === 'rejected').length;
      }
      client.close();
      const bareErrors = await bareBurst(barePort);
      if (bareErrors > 0) throw new Error(`the bare server failed ${bareErrors} requests`);

      await sleep(IDLE_MS);
      rss.fleet.push(rssMiB(pid));
      rss.bare.push(rssMiB(bare.child.pid));
      const alive = controller.child.exitCode === null && controller.child.signalCode === null;
      if (round === 0)
        checks.push({
          label: 'controller alive after the burst',
          ok: alive,
          detail: alive ? `pid ${pid}` : 'it exited',
        });
      await stop(controller.child);
      await stop(bare.child);
      if (round === 0) {
        const readsAudited = auditedReads() - readsBefore;
        checks.push({
          label: 'every snapshot audited',
          ok: readsAudited === CONCURRENT - snapshotErrors,
          detail: `${readsAudited} reads counted in the audit records for ${CONCURRENT - snapshotErrors} snapshots`,
        });
      }
    }

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
        metric: `${CONCURRENT} concurrent exports × ${ROUNDS}: errors`,
        value: errors,
        unit: '',
        goal: GOAL_ERRORS,
        detail: firstError ? `first: ${firstError}` : `wall ${round(burstMs)} ms (first round)`,
      },
      {
        metric: `${CONCURRENT} concurrent snapshots: wall`,
        value: round(snapshotMs),
        unit: 'ms',
        goal: null,
        detail: `${snapshotErrors} error(s)`,
      },
      {
        metric: `idle RSS after start (${IDLE_MS / 1000} s idle), median of ${ROUNDS}`,
        value: rss.started.includes(null)
          ? null
          : round([...rss.started].sort((a, b) => a - b)[1] ?? rss.started[0]),
        unit: 'MiB',
        goal: null,
      },
    ].map((m) => ({
      ...m,
      status: m.goal === null || m.value === null ? null : m.value <= m.goal ? 'PASS' : 'OVER',
    }));
    const goals = rss.fleet.includes(null)
      ? []
      : [
          ratioRow({
            id: 'controller-rss',
            label: `controller idle RSS after a ${CONCURRENT}-request burst vs a bare node:http server`,
            workload: `${ROUNDS} rounds, fresh processes, ${IDLE_MS / 1000} s idle`,
            fleet: { label: 'fleet controller serve', samples: rss.fleet },
            peer: { label: 'bare node:http', samples: rss.bare },
            goal: GOAL_RSS_RATIO,
            unit: 'MiB',
          }),
        ];
    return {
      name,
      description,
      ok: checks.every((c) => c.ok),
      over: measurements.some((m) => m.status === 'OVER') || goals.some((g) => g.status === 'OVER'),
      fileBytes: Buffer.byteLength(content),
      measurements,
      checks,
      goals,
    };
  } finally {
    for (const child of running) await stop(child);
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
    `a real \`fleet controller serve\` on 127.0.0.1, a ${result.fileBytes}-byte file, core's client (one keep-alive connection)`,
    '',
    renderTable(columns, rows),
    '',
    ...(result.goals.length > 0
      ? [renderGoalRows(result.goals), '']
      : ['idle RSS: n/a (no /proc)']),
    ...result.checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'}  ${c.label}: ${c.detail}`),
  ].join('\n');
}
