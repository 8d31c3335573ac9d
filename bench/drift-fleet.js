// Drift over a virtual lab fleet (contract §14): `fleet drift --json` (the real CLI, start-up
// included) against 10, 100 and 1,000 nodes served by one `lab up --virtual` process, 5 files per
// node, all current; then 10 % of the 1,000 drifted. Goals: ≤ 2 s all current at 1,000 nodes,
// ≤ 3 s with 10 % drifted, and a flat cost per host from 10 to 1,000.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanEnv, median, renderTable, repoRoot, round } from './lib.js';

export const name = 'drift-fleet';
export const description =
  'fleet drift over 10 / 100 / 1,000 virtual lab nodes × 5 files (contract §14)';

const CLI = path.join(repoRoot, 'packages/cli/bin/run.js');
const SIZES = [10, 100, 1000];
const GOAL_CURRENT_MS = 2000;
const GOAL_DRIFTED_MS = 3000;

const load = (relative) => import(pathToFileURL(path.join(repoRoot, relative)).href);

function fleet(args, env) {
  const start = process.hrtime.bigint();
  const child = spawnSync(process.execPath, [CLI, ...args], {
    env: cleanEnv({ OCLIF_SKIP_NEW_VERSION_CHECK: 'true', ...env }),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (child.error) throw child.error;
  return { ms, status: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** Writes every host's desired files into its home, as an install would leave them. */
export async function makeCurrent(lab) {
  const core = await load('packages/core/dist/src/index.js');
  const testkit = await load('packages/testkit/dist/src/index.js');
  const harness = await load('plugins/harness-policy/dist/src/index.js');
  const plugins = ['router', 'transport-identity', 'harness-policy'];
  const hooks = await Promise.all(
    plugins.map(async (p) => ({
      plugin: { name: `@fleet/plugin-${p}`, version: '0', type: 'core' },
      hook: (await load(`plugins/${p}/dist/src/register.js`)).default,
    })),
  );
  const registry = await testkit.registryFromHooks(hooks);
  const repo = await core.loadRepo(lab.repo);
  const runtimes = [];
  for (const entry of registry.domains()) {
    let installer;
    try {
      installer = await registry.installer(entry.descriptor.domain);
    } catch {
      installer = undefined;
    }
    runtimes.push(core.domainRuntime(entry.descriptor, installer));
  }
  const snapshot = await core.readCanonicalSnapshot(
    core.createGit(lab.repo),
    core.canonicalPaths(runtimes),
  );
  for (const host of lab.hosts) {
    const variables = core.hostVariables(repo, host.name);
    const targets = core.targetsForHost(host.name, variables, runtimes, snapshot);
    for (const target of targets) {
      const body = target.desired.content;
      const content = target.file.kind === 'block' ? harness.spliceBlock('', body) : body;
      const file = path.join(host.home, target.path.slice(2));
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, content, { mode: 0o600 });
      // A derived copy (the router's installed volume) holds the same bytes after an install.
      for (const derived of registry.domain(target.domain).descriptor.derivedPaths ?? []) {
        if (derived.derivedFrom !== target.file.id) continue;
        const copy = path.join(
          host.home,
          core.nodePathFor(derived, variables, `hosts/${host.name}.yaml`).slice(2),
        );
        mkdirSync(path.dirname(copy), { recursive: true, mode: 0o700 });
        writeFileSync(copy, content, { mode: 0o600 });
      }
    }
  }
}

function timeDrift(env, runs, expect) {
  const samples = [];
  let summary;
  for (let i = 0; i < runs + 1; i += 1) {
    const run = fleet(['drift', '--json'], env);
    const report = JSON.parse(run.stdout);
    summary = report.summary;
    if (summary.current !== expect.current || summary.drifted !== expect.drifted) {
      throw new Error(
        `unexpected drift summary ${JSON.stringify(summary)} (exit ${run.status}) ${run.stderr.slice(0, 300)}`,
      );
    }
    if (i > 0) samples.push(run.ms); // the first run warms the page cache
  }
  return { medianMs: median(samples), samples, summary };
}

export async function run({ runs = 5 } = {}) {
  const rows = [];
  const work = mkdtempSync(path.join(tmpdir(), 'fleet-bench-drift-'));
  const measuredRuns = Math.max(3, Math.min(runs, 7));
  try {
    for (const size of SIZES) {
      const dir = path.join(work, `lab-${size}`);
      const up = fleet(
        ['lab', 'up', '--virtual', '--hosts', String(size), '--dir', dir, '--json'],
        {},
      );
      if (up.status !== 0) throw new Error(`lab up failed: ${up.stderr.slice(0, 500)}`);
      const lab = JSON.parse(up.stdout);
      const env = { FLEET_REPO: lab.repo, FLEET_CREDENTIALS: lab.credentials };
      try {
        await makeCurrent(lab);
        const current = timeDrift(env, measuredRuns, { current: size, drifted: 0 });
        rows.push({
          size,
          case: 'all current',
          ...current,
          goalMs: size === 1000 ? GOAL_CURRENT_MS : undefined,
        });
        if (size === 1000) {
          const drifted = lab.hosts.filter((_, i) => i % 10 === 0);
          for (const host of drifted)
            appendFileSync(path.join(host.home, '.claude/CLAUDE.md'), '- a local rule\n');
          const tenth = timeDrift(env, measuredRuns, {
            current: size - drifted.length,
            drifted: drifted.length,
          });
          rows.push({ size, case: '10 % drifted', ...tenth, goalMs: GOAL_DRIFTED_MS });
        }
      } finally {
        fleet(['lab', 'down', '--dir', dir], {});
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const base = rows[0];
  const results = rows.map((row) => ({
    hosts: row.size,
    case: row.case,
    medianMs: round(row.medianMs),
    perHostMs: round(row.medianMs / row.size, 2),
    // Cost per host beyond the 10-host run's: the part that grows with the fleet.
    marginalPerHostMs:
      row === base ? null : round((row.medianMs - base.medianMs) / (row.size - base.size), 2),
    goalMs: row.goalMs ?? null,
    over: row.goalMs !== undefined && row.medianMs > row.goalMs,
  }));
  return {
    name,
    description,
    ok: true,
    over: results.some((r) => r.over),
    runs: measuredRuns,
    results,
  };
}

export function format(result) {
  const columns = [
    { key: 'hosts', label: 'hosts', align: 'right' },
    { key: 'case', label: 'case', align: 'left' },
    { key: 'median', label: 'median', align: 'right' },
    { key: 'perHost', label: 'ms/host', align: 'right' },
    { key: 'marginal', label: 'marginal ms/host', align: 'right' },
    { key: 'goal', label: 'goal', align: 'right' },
    { key: 'result', label: 'result', align: 'left' },
  ];
  const rows = result.results.map((r) => ({
    hosts: String(r.hosts),
    case: r.case,
    median: `${r.medianMs} ms`,
    perHost: String(r.perHostMs),
    marginal: r.marginalPerHostMs === null ? '—' : String(r.marginalPerHostMs),
    goal: r.goalMs === null ? '' : `≤ ${r.goalMs} ms`,
    result: r.goalMs === null ? '' : r.over ? 'OVER' : 'PASS',
  }));
  return [
    `medians of ${result.runs} runs of \`fleet drift --json\` (CLI start-up included)`,
    '',
    renderTable(columns, rows),
  ].join('\n');
}
