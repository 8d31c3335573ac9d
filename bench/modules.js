// Modules loaded per verb (contract §14, "means": the CLI entry loads what the verb needs): each
// verb runs once under bench/trace-imports.mjs against a one-host virtual lab, and what it loaded
// is counted: the files Node read, the modules inside the files of core's bundle among them, and
// the modules of the packages that weigh most (bundled or not). `controller serve` is counted up
// to the moment it serves. No goal: the numbers explain the cold-start and drift rows.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundledModules, cleanEnv, renderTable, repoRoot, timeNode } from './lib.js';

export const name = 'modules';
export const description =
  'modules each verb loads (bench/trace-imports.mjs), one-host virtual lab';

const CLI = path.join(repoRoot, 'packages/cli/bin/run.js');
const TRACER = pathToFileURL(path.join(repoRoot, 'bench/trace-imports.mjs')).href;
const GROUPS = ['@oclif', 'zod', 'yaml', 'execa', 'semver', 'tsyringe', 'diff'];

function packageOf(url) {
  const rest = url.split('/node_modules/').at(-1);
  if (rest === url) {
    const local = url.slice(pathToFileURL(repoRoot).href.replace(/\/$/, '').length + 1).split('/');
    return `fleet:${local.slice(0, 2).join('/')}`;
  }
  const parts = rest.split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** A bundled module's package: `node_modules/@a/b/x.js` → `@a/b`; core's own → fleet's. */
function packageOfBundled(module) {
  if (!module.startsWith('node_modules/')) return 'fleet:packages/core';
  const parts = module
    .split('/node_modules/')
    .at(-1)
    .replace(/^node_modules\//, '')
    .split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

function summarizeTrace(traceFile) {
  const urls = existsSync(traceFile)
    ? [
        ...new Set(
          readFileSync(traceFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line).url)
            .filter((url) => url?.startsWith('file:') && !url.endsWith('/package.json')),
        ),
      ]
    : [];
  // Counted by module: a file of core's bundle counts as the modules inside it.
  const byPackage = {};
  let bundled = 0;
  for (const url of urls) {
    const inside = bundledModules(url);
    const packages = inside ? inside.map(packageOfBundled) : [packageOf(url)];
    bundled += inside?.length ?? 0;
    for (const pkg of packages) byPackage[pkg] = (byPackage[pkg] ?? 0) + 1;
  }
  const group = (prefix) =>
    Object.entries(byPackage)
      .filter(([pkg]) => pkg === prefix || pkg.startsWith(`${prefix}/`))
      .reduce((n, [, count]) => n + count, 0);
  return {
    total: urls.length,
    bundled,
    fleet: group('fleet:packages') + group('fleet:plugins'),
    ...Object.fromEntries(GROUPS.map((g) => [g, group(g)])),
  };
}

function traced(args, env, traceFile) {
  const run = timeNode(['--import', TRACER, CLI, ...args], {
    env: { ...env, FLEET_TRACE_IMPORTS: traceFile },
  });
  return { status: run.status, ...summarizeTrace(traceFile) };
}

/** `controller serve`, traced until it prints its URL, then stopped. */
function tracedServe(home, env, traceFile) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        TRACER,
        CLI,
        'controller',
        'serve',
        '--home',
        home,
        '--node-id',
        'trace',
        '--port',
        '0',
        '--json',
      ],
      { env: { ...env, FLEET_TRACE_IMPORTS: traceFile }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let served = false;
    child.stdout.once('data', () => {
      served = true;
      child.kill('SIGTERM');
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (served) resolve({ status: 0, ...summarizeTrace(traceFile) });
      else reject(new Error(`controller serve exited ${code} before serving`));
    });
  });
}

export async function run() {
  const work = mkdtempSync(path.join(tmpdir(), 'fleet-bench-modules-'));
  const base = cleanEnv({ OCLIF_SKIP_NEW_VERSION_CHECK: 'true' });
  const dir = path.join(work, 'lab');
  const rows = [];
  let up;
  try {
    up = timeNode([CLI, 'lab', 'up', '--virtual', '--hosts', '1', '--dir', dir, '--json'], {
      env: base,
    });
    if (up.status !== 0) throw new Error(`lab up failed: ${up.stderr.slice(0, 400)}`);
    const lab = JSON.parse(up.stdout);
    const env = { ...base, FLEET_REPO: lab.repo, FLEET_CREDENTIALS: lab.credentials };
    const host = lab.hosts[0].name;
    const verbs = [
      ['--version', ['--version']],
      ['--help', ['--help']],
      ['validate', ['validate', '--json']],
      ['drift', ['drift', '--json']],
      ['config plan', ['config', 'plan', host, 'router', '--json']],
      ['config install', ['config', 'install', host, 'router', '--confirm', '--json']],
      ['apply', ['apply', '--domain', 'router', '--json']],
    ];
    verbs.forEach(([label, args], i) => {
      rows.push({ verb: label, ...traced(args, env, path.join(work, `trace-${i}.jsonl`)) });
    });
    mkdirSync(path.join(work, 'home'));
    rows.push({
      verb: 'controller serve',
      ...(await tracedServe(path.join(work, 'home'), env, path.join(work, 'trace-serve.jsonl'))),
    });
  } finally {
    if (up) timeNode([CLI, 'lab', 'down', '--dir', dir], { env: base });
    rmSync(work, { recursive: true, force: true });
  }
  return { name, description, ok: rows.every((r) => r.total > 0), over: false, verbs: rows };
}

export function format(result) {
  const columns = [
    { key: 'verb', label: 'verb' },
    { key: 'total', label: 'files', align: 'right' },
    { key: 'bundled', label: 'bundled', align: 'right' },
    { key: 'fleet', label: 'fleet', align: 'right' },
    ...GROUPS.map((g) => ({ key: g, label: g, align: 'right' })),
  ];
  return renderTable(
    columns,
    result.verbs.map((r) => Object.fromEntries(columns.map((c) => [c.key, String(r[c.key])]))),
  );
}
