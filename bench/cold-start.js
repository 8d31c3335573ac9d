// Cold start (contract §14): `fleet --version` and `fleet --help` as a ratio to `node -e 0` measured
// in the same run, and a check that neither of them loads domain code (contract §2).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  bundledModules,
  cleanEnv,
  ratioRow,
  renderTable,
  repoRoot,
  round,
  summarize,
  timeNode,
} from './lib.js';

export const name = 'cold-start';
export const description =
  'fleet --version / --help wall time as a ratio to node -e 0 (contract §14)';

const CLI = 'packages/cli/bin/run.js';
const TRACER = pathToFileURL(path.join(repoRoot, 'bench/trace-imports.mjs')).href;

// `expect` guards against timing an error path: each command must exit 0 and print this.
const COMMANDS = [
  { id: 'node', label: 'node -e 0', args: ['-e', '0'], expect: /^$/ },
  {
    id: 'version',
    label: 'fleet --version',
    args: [CLI, '--version'],
    goal: 1.5,
    expect: /@fleet\/cli\/\S+/,
  },
  { id: 'help', label: 'fleet --help', args: [CLI, '--help'], goal: 2.5, expect: /USAGE/ },
];

// What `--version` and `--help` must never load. package.json files are metadata, not code.
// Core's bundle is judged by what is inside each file it loads (domainInBundle) and by whether zod
// ran (the tracer's `evaluated` line): `--help` may load the command entry — fleet's base command
// and the oclif inside it — but none of core's domain modules and no zod.
const FORBIDDEN = [
  {
    label: 'plugin code (plugins/*/dist/src)',
    test: (url) => /\/(?:plugins\/[^/]+|node_modules\/@fleet\/plugin-[^/]+)\/dist\/src\//.test(url),
  },
  {
    label: '@fleet/core',
    test: (url) =>
      /\/(?:packages|node_modules\/@fleet)\/core\//.test(url) && bundledModules(url) === null,
  },
  {
    label: '@fleet/controller',
    test: (url) => /\/(?:packages|node_modules\/@fleet)\/controller\//.test(url),
  },
];

export async function run({ runs = 15, warmups = 2 } = {}) {
  const notes = [];
  for (const dir of ['packages/cli', ...listPlugins()]) {
    if (!existsSync(path.join(repoRoot, dir, 'oclif.manifest.json'))) {
      notes.push(
        `warning: ${dir}/oclif.manifest.json is missing (run \`npm run build\`): timings are pessimistic`,
      );
    }
  }

  // Each command once, checked, before anything is timed.
  for (const command of COMMANDS) {
    const r = timeNode(command.args);
    if (r.status !== 0 || !command.expect.test(r.stdout)) {
      throw new Error(
        `\`node ${command.args.join(' ')}\` failed (exit ${r.status ?? r.signal}):\n${r.stderr || r.stdout}`,
      );
    }
  }

  // Warm-ups fill the OS file cache; they are not recorded. Then the commands run interleaved,
  // in a rotating order, so that a slow patch of the machine affects all of them alike.
  const samples = Object.fromEntries(COMMANDS.map((c) => [c.id, []]));
  for (let i = 0; i < warmups + runs; i++) {
    for (let k = 0; k < COMMANDS.length; k++) {
      const command = COMMANDS[(i + k) % COMMANDS.length];
      const { ms } = timeNode(command.args);
      if (i >= warmups) samples[command.id].push(ms);
    }
  }

  const baseline = summarize(samples.node).medianMs;
  const measurements = COMMANDS.map((command) => {
    const stats = summarize(samples[command.id]);
    const ratio = stats.medianMs / baseline;
    return {
      id: command.id,
      label: command.label,
      command: `node ${command.args.join(' ')}`,
      medianMs: round(stats.medianMs),
      minMs: round(stats.minMs),
      maxMs: round(stats.maxMs),
      ratio: round(ratio, 2),
      goal: command.goal ?? null,
      status: command.goal === undefined ? null : ratio <= command.goal ? 'ok' : 'OVER',
      samplesMs: samples[command.id].map((ms) => round(ms, 2)),
    };
  });

  const checks = COMMANDS.filter((c) => c.id !== 'node').map((c) => checkImports(c));
  const goals = COMMANDS.filter((c) => c.goal !== undefined).map((c) =>
    ratioRow({
      id: `cold-start-${c.id}`,
      label: `cold start: ${c.label} vs node -e 0`,
      workload: `${runs} runs each, interleaved`,
      fleet: { label: c.label, samples: samples[c.id] },
      peer: { label: 'node -e 0', samples: samples.node },
      goal: c.goal,
    }),
  );

  return {
    name,
    description,
    settings: { runs, warmups, node: process.version },
    measurements,
    checks,
    notes,
    goals,
    ok: checks.every((c) => c.ok),
    over: measurements.some((m) => m.status === 'OVER'),
  };
}

/** The domain modules inside a file of core's bundle: core's own outside its command entry, zod. */
function domainInBundle(url) {
  return (bundledModules(url) ?? []).filter((module) =>
    module.startsWith('dist/src/')
      ? !module.startsWith('dist/src/command/')
      : module.startsWith('node_modules/zod/'),
  );
}

/** Runs a command under bench/trace-imports.mjs and looks for forbidden modules in what it loaded. */
function checkImports(command) {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-trace-'));
  const traceFile = path.join(dir, 'trace.jsonl');
  try {
    const r = timeNode(['--import', TRACER, ...command.args], {
      env: cleanEnv({ FLEET_TRACE_IMPORTS: traceFile }),
    });
    const entries = existsSync(traceFile)
      ? readFileSync(traceFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : [];
    const urls = [...new Set(entries.map((e) => e.url).filter((url) => url?.startsWith('file:')))];
    const code = urls.filter((url) => !url.endsWith('/package.json'));
    const violations = [];
    for (const rule of FORBIDDEN) {
      for (const url of code.filter(rule.test)) violations.push({ rule: rule.label, url });
    }
    for (const url of code) {
      for (const module of domainInBundle(url)) {
        violations.push({ rule: '@fleet/core (in its bundle)', url: `${url} holds ${module}` });
      }
    }
    for (const e of entries.filter((entry) => entry.kind === 'evaluated')) {
      if (e.zod) violations.push({ rule: '@fleet/core (in its bundle)', url: 'zod was evaluated' });
    }
    const evaluated = entries.some((entry) => entry.kind === 'evaluated');
    for (const e of entries) {
      if (e.specifier === '@fleet/core' || e.specifier?.startsWith('@fleet/core/')) {
        if (bundledModules(e.url) === null && !violations.some((v) => v.url === e.url))
          violations.push({ rule: '@fleet/core', url: e.url });
      }
    }
    const rootUrl = pathToFileURL(repoRoot).href;
    const fleetFiles = code
      .filter((url) => url.startsWith(rootUrl) && !url.includes('/node_modules/'))
      .map((url) => url.slice(rootUrl.length).replace(/^\//, ''));
    // The tracer must demonstrably work, or "nothing forbidden" would prove nothing: it must at
    // least have seen the CLI's entry point (`--version` is answered before oclif is imported).
    const traced = fleetFiles.includes('packages/cli/bin/run.js') && evaluated;
    const ok = r.status === 0 && traced && violations.length === 0;
    let detail;
    if (r.status !== 0)
      detail = `the command failed under the tracer (exit ${r.status ?? r.signal})`;
    else if (!traced) detail = 'the tracer recorded nothing (did module.register work?)';
    else if (violations.length > 0)
      detail = violations.map((v) => `${v.rule}: ${v.url}`).join('; ');
    else
      detail = `${urls.length} modules loaded, none from plugins/*/dist/src or @fleet/controller, none of @fleet/core's domain modules`;
    return {
      id: `imports-${command.id}`,
      label: `${command.label.replace(/^fleet /, '')} loads no domain code`,
      ok,
      detail,
      modules: urls.length,
      fleetFiles,
      violations,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function listPlugins() {
  const cli = JSON.parse(readFileSync(path.join(repoRoot, 'packages/cli/package.json'), 'utf8'));
  return (cli.oclif?.plugins ?? [])
    .filter((p) => p.startsWith('@fleet/plugin-'))
    .map((p) => `plugins/${p.slice('@fleet/plugin-'.length)}`)
    .filter((dir) => existsSync(path.join(repoRoot, dir)));
}

/** The human-readable report printed by bench/run.js. */
export function format(result) {
  const { runs, warmups, node } = result.settings;
  const rows = result.measurements.map((m) => ({
    command: m.label,
    median: `${m.medianMs.toFixed(1)} ms`,
    range: `${m.minMs.toFixed(1)}–${m.maxMs.toFixed(1)}`,
    ratio: `${m.ratio.toFixed(2)}×`,
    goal: m.goal === null ? '' : `≤ ${m.goal}×`,
    result: m.status ?? '',
  }));
  const columns = [
    { key: 'command', label: 'command' },
    { key: 'median', label: 'median', align: 'right' },
    { key: 'range', label: 'min–max ms', align: 'right' },
    { key: 'ratio', label: 'ratio', align: 'right' },
    { key: 'goal', label: 'goal', align: 'right' },
    { key: 'result', label: 'result' },
  ];
  const lines = [
    `medians of ${runs} runs after ${warmups} warm-ups each, interleaved; node ${node}; ratio = median / median of node -e 0`,
    '',
    renderTable(columns, rows),
    '',
    ...result.checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'}  ${c.label}: ${c.detail}`),
    ...result.checks.map(
      (c) =>
        `      ${c.label.split(' ')[0]} loaded from this repo: ${c.fleetFiles.join(', ') || 'nothing'}`,
    ),
    ...result.notes,
  ];
  return lines.join('\n');
}
