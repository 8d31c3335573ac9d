#!/usr/bin/env node
// Runs fleet's benchmarks (contract §14) and prints their results. `npm run bench` builds first.
//
//   node bench/run.js [NAME…] [--json] [--runs N] [--warmups N] [--strict]
//
// NAME filters benchmarks by substring (default: all). --json prints one JSON document instead of
// tables. Goals are reported, not enforced (benchmarks are not timed tests): the exit code is 1
// only when a benchmark fails or one of its correctness checks fails, or, with --strict, when a
// goal is missed too.
//
// A benchmark is a module in bench/ exporting `name`, `description`, `async run(options)` (a
// JSON-serializable result with `ok` and `over`) and optionally `format(result)` (text); add it
// to BENCHMARKS below.
import os from 'node:os';
import { parseArgs } from 'node:util';

const BENCHMARKS = [
  'cold-start',
  'modules',
  'peers',
  'drift-fleet',
  'controller',
  'classify-history',
  'enroll',
  'upgrade-fleet',
];

function usage(message) {
  if (message) console.error(`bench: ${message}`);
  console.error('usage: node bench/run.js [NAME…] [--json] [--runs N] [--warmups N] [--strict]');
  console.error(`benchmarks: ${BENCHMARKS.join(', ')}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      strict: { type: 'boolean', default: false },
      runs: { type: 'string', default: '15' },
      warmups: { type: 'string', default: '2' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (error) {
  usage(error.message);
}
const { values, positionals } = parsed;
if (values.help) usage();
const runs = Number(values.runs);
const warmups = Number(values.warmups);
if (!Number.isInteger(runs) || runs < 1) usage('--runs must be a positive integer');
if (!Number.isInteger(warmups) || warmups < 0) usage('--warmups must be a non-negative integer');

const selected =
  positionals.length === 0
    ? BENCHMARKS
    : BENCHMARKS.filter((b) => positionals.some((p) => b.includes(p)));
if (selected.length === 0) usage(`no benchmark matches ${positionals.join(', ')}`);

const environment = {
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  cpus: os.availableParallelism?.() ?? os.cpus().length,
  loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100),
  startedAt: new Date().toISOString(),
  // Node.js 20 reads this file at every start, before any JavaScript runs; see bench/README.md.
  nodeExtraCaCerts: process.env.NODE_EXTRA_CA_CERTS ?? null,
};
if (!values.json) {
  console.log(
    `fleet benchmarks — node ${environment.node}, ${environment.platform}, ${environment.cpus} CPUs, ` +
      `load average ${environment.loadavg.join(' ')}`,
  );
  if (environment.nodeExtraCaCerts !== null) {
    console.log(
      `note: NODE_EXTRA_CA_CERTS is set (${environment.nodeExtraCaCerts}): every Node.js side ` +
        '(fleet, its lab, node -e 0) parses it at start on Node.js 20; the peers do not (bench/README.md)',
    );
  }
}

const results = [];
for (const name of selected) {
  const bench = await import(`./${name}.js`);
  if (!values.json) console.log(`\n== ${bench.name}: ${bench.description}`);
  let result;
  try {
    result = await bench.run({ runs, warmups });
  } catch (error) {
    result = {
      name: bench.name,
      description: bench.description,
      ok: false,
      over: false,
      error: error.message,
    };
  }
  results.push(result);
  if (!values.json) {
    if (result.error) console.log(`ERROR  ${result.error}`);
    else console.log(bench.format ? bench.format(result) : JSON.stringify(result, null, 2));
  }
}

const ok = results.every((r) => r.ok) && !(values.strict && results.some((r) => r.over));
// Every goal of contract §14, as a ratio measured in this run, in one table (reference rows stay
// in their benchmark's own table).
const { hasGoal, renderGoalRows } = await import('./lib.js');
const goals = results.flatMap((r) => r.goals ?? []).filter(hasGoal);
if (!values.json && goals.length > 0) {
  console.log(
    `\n== contract §14 goals, measured in this run (load average at start ${environment.loadavg.join(' ')})`,
  );
  console.log(renderGoalRows(goals));
}
if (values.json) {
  console.log(JSON.stringify({ environment, ok, goals, benchmarks: results }, null, 2));
} else {
  const over = results.filter((r) => r.over).map((r) => r.name);
  console.log(
    `\n${ok ? 'done' : 'FAILED'}: ${results.length} benchmark(s)` +
      (over.length > 0 ? `; goals missed in ${over.join(', ')}` : '; all goals met'),
  );
}
process.exitCode = ok ? 0 : 1;
