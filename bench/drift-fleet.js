// Drift over a virtual lab fleet (contract §14): `fleet drift --json` (the real CLI, start-up
// included) against 10, 100 and 1,000 nodes served by one `lab up --virtual` process, 5 files per
// node, all current; then 10 % of the 1,000 drifted. Goals, each measured side by side in this run:
// - 1,000 hosts, all current: `fleet drift` ≤ 5× the in-process floor (bench/drift-floor.js: read,
//   render and compare the same files in one Node process, interleaved with the drift runs);
// - history: the same drift over a repository whose CLAUDE.md has 1,000 more versions adds
//   ≤ 50 ms (10 hosts; the repository's tree at HEAD is identical, only its history differs).
// Reported as floors: the cost per host from 10 to 1,000 (flat), and 10 % drifted.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  cleanEnv,
  deltaRow,
  interleave,
  median,
  ratioRow,
  renderGoalRows,
  renderTable,
  repoRoot,
  round,
  timeCommand,
  withAutoStartedResident,
} from './lib.js';

export const name = 'drift-fleet';
export const description =
  'fleet drift over 10 / 100 / 1,000 virtual lab nodes × 5 files, against the in-process floor; history cost (contract §14)';

const CLI = path.join(repoRoot, 'packages/cli/bin/run.js');
const FLOOR = path.join(repoRoot, 'bench/drift-floor.js');
const SIZES = [10, 100, 1000];
const GOAL_FLOOR_RATIO = 5;
const GOAL_HISTORY_MS = 50;
const HISTORY_VERSIONS = 1000;
const HISTORY_FILE = 'domains/harness-policy/CLAUDE.md';

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

export async function makeCurrent(lab) {
  const core = await load('packages/core/dist/src/index.js');
  const testkit = await load('packages/testkit/dist/src/index.js');
  const plugins = ['router', 'transport-identity', 'harness-policy', 'files'];
  const hooks = await Promise.all(
    plugins.map(async (p) => ({
      plugin: { name: `@fleet/plugin-${p}`, version: '0', type: 'core' },
      hook: (await load(`plugins/${p}/dist/src/register.js`)).default,
    })),
  );
  const registry = await testkit.registryFromHooks(hooks);
  const repo = await core.loadRepo(lab.repo);
  const runtimes = [];
  const declarations = registry.domains().map((entry) => entry.descriptor);
  for (const declaration of declarations) {
    let installer;
    try {
      installer = await registry.installer(declaration.domain);
    } catch {
      installer = undefined;
    }
    // A domain whose files the repository declares (the files domain's files.yaml, contract
    // §10.4) gets them as every verb gives them: from the manifest at the lab's HEAD.
    const manifestPath = core.repoManifestPath(declaration);
    const manifest =
      manifestPath === null || !existsSync(path.join(lab.repo, manifestPath))
        ? null
        : readFileSync(path.join(lab.repo, manifestPath), 'utf8');
    const others = declarations.filter((d) => d.domain !== declaration.domain);
    const declared = core.withRepoFiles(declaration, installer, manifest, others);
    runtimes.push(core.domainRuntime(declared, installer));
  }
  const snapshot = await core.readCanonicalSnapshot(
    core.createGit(lab.repo),
    core.canonicalPaths(runtimes),
  );
  // The declared files, for the floor: what a hand-written tool would hard-code.
  const files = [];
  for (const runtime of runtimes) {
    for (const file of runtime.declaration.files) {
      files.push({
        path: file.path,
        canonical: core.canonicalPath(runtime.declaration, file),
        kind: file.kind,
        ...(file.markers ? { markers: file.markers } : {}),
      });
    }
  }
  for (const host of lab.hosts) {
    const variables = core.hostVariables(repo, host.name);
    const targets = core.targetsForHost(host.name, variables, runtimes, snapshot);
    for (const target of targets) {
      const body = target.desired.content;
      const content =
        target.file.kind === 'block'
          ? core.spliceBlock('', body, target.file.markers, target.path)
          : body;
      const file = path.join(host.home, target.path.slice(2));
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      // A whole file with a declared mode (contract §10.4) is current only with that mode.
      const mode =
        target.file.kind === 'whole' && target.file.mode !== undefined
          ? core.parseFileMode(target.file.mode)
          : 0o600;
      writeFileSync(file, content, { mode });
      chmodSync(file, mode); // past the umask
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
  return files;
}

function checkedDrift(env, expect) {
  const run = fleet(['drift', '--json'], env);
  const { summary } = JSON.parse(run.stdout);
  if (summary.current !== expect.current || summary.drifted !== expect.drifted) {
    throw new Error(
      `unexpected drift summary ${JSON.stringify(summary)} (exit ${run.status}) ${run.stderr.slice(0, 300)}`,
    );
  }
  return run;
}

function timeDrift(env, runs, expect) {
  const samples = [];
  for (let i = 0; i < runs + 1; i += 1) {
    const run = checkedDrift(env, expect);
    if (i > 0) samples.push(run.ms); // the first run warms the page cache (and fleet's cache)
  }
  return { medianMs: median(samples), samples };
}

function floorRun(planFile, hosts, files) {
  const run = timeCommand(process.execPath, [FLOOR, planFile], { env: cleanEnv() });
  if (run.status !== 0) throw new Error(`the floor failed: ${run.stderr.slice(0, 300)}`);
  const answer = JSON.parse(run.stdout);
  if (answer.current !== hosts * files || answer.differing !== 0) {
    throw new Error(`the floor found ${answer.differing} of ${hosts * files} files not current`);
  }
  return run;
}

/** A copy of the lab's repository whose HISTORY_FILE has 1,000 more versions, HEAD's tree unchanged. */
export function repoWithHistory(repo, target) {
  execFileSync('git', ['clone', '-q', repo, target]);
  const head = execFileSync('git', ['-C', target, 'rev-parse', 'HEAD'], {
    encoding: 'utf8',
  }).trim();
  const branch = execFileSync('git', ['-C', target, 'symbolic-ref', 'HEAD'], {
    encoding: 'utf8',
  }).trim();
  const current = readFileSync(path.join(target, HISTORY_FILE));
  let stream = '';
  for (let v = 0; v <= HISTORY_VERSIONS; v += 1) {
    const data =
      v === HISTORY_VERSIONS
        ? current
        : Buffer.concat([current, Buffer.from(`- bench rule ${v}: a version of the policy.\n`)]);
    stream +=
      `commit ${branch}\ncommitter bench <bench@localhost> ${1700000000 + v * 60} +0000\n` +
      `data ${`v${v}`.length}\nv${v}\n${v === 0 ? `from ${head}\n` : ''}` +
      `M 100644 inline ${HISTORY_FILE}\ndata ${data.length}\n`;
    stream += data.toString('latin1') + '\n';
  }
  execFileSync('git', ['-C', target, 'fast-import', '--quiet'], {
    input: Buffer.from(stream, 'latin1'),
  });
  execFileSync('git', ['-C', target, 'reset', '-q', '--hard', branch]);
  const same = execFileSync('git', ['-C', target, 'diff', '--quiet', head, 'HEAD']);
  void same; // throws when HEAD's tree differs from the lab's
}

export async function run({ runs = 5 } = {}) {
  const rows = [];
  const goals = [];
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
        const files = await makeCurrent(lab);
        const expect = { current: size, drifted: 0 };
        if (size === 1000) {
          const planFile = path.join(work, 'floor-plan.json');
          writeFileSync(
            planFile,
            JSON.stringify({
              repo: lab.repo,
              hosts: lab.hosts.map((h) => ({ name: h.name, home: h.home })),
              files,
            }),
          );
          const pairs = interleave({
            runs: measuredRuns,
            warmups: 1,
            a: () => checkedDrift(env, expect),
            b: () => floorRun(planFile, size, files.length),
          });
          rows.push({ size, case: 'all current', medianMs: median(pairs.a), samples: pairs.a });
          goals.push(
            ratioRow({
              id: 'drift-1000-floor',
              label: '1,000 hosts all current: drift vs the in-process floor',
              workload: `${size} virtual hosts × ${files.length} files`,
              fleet: { label: 'fleet drift', samples: pairs.a },
              peer: { label: 'floor (bench/drift-floor.js)', samples: pairs.b },
              goal: GOAL_FLOOR_RATIO,
            }),
          );
          // The same drift with the operator's resident process (docs/resident.md), as
          // FLEET_RESIDENT=auto runs it: the first drift finds none and starts one as it ends.
          const first = { args: ['drift', '--json'], accept: [0] };
          await withAutoStartedResident(CLI, work, env, first, (residentEnv, firstCallMs) => {
            const resident = interleave({
              runs: measuredRuns,
              warmups: 2,
              a: () => checkedDrift(residentEnv, expect),
              b: () => floorRun(planFile, size, files.length),
            });
            goals.push(
              ratioRow({
                id: 'drift-1000-floor-resident',
                label:
                  '1,000 hosts all current: drift vs the in-process floor, with the resident process (FLEET_RESIDENT=auto)',
                workload: `${size} virtual hosts × ${files.length} files`,
                fleet: { label: 'fleet drift (resident)', samples: resident.a },
                peer: { label: 'floor (bench/drift-floor.js)', samples: resident.b },
                goal: GOAL_FLOOR_RATIO,
                note: `the first drift, which found no resident and started one as it ended: ${firstCallMs.toFixed(1)} ms`,
              }),
            );
          });
          const drifted = lab.hosts.filter((_, i) => i % 10 === 0);
          for (const host of drifted)
            appendFileSync(path.join(host.home, '.claude/CLAUDE.md'), '- a local rule\n');
          const tenth = timeDrift(env, measuredRuns, {
            current: size - drifted.length,
            drifted: drifted.length,
          });
          rows.push({ size, case: '10 % drifted', ...tenth });
        } else {
          rows.push({ size, case: 'all current', ...timeDrift(env, measuredRuns, expect) });
        }
        if (size === 10) {
          const historyRepo = path.join(work, 'repo-with-history');
          repoWithHistory(lab.repo, historyRepo);
          const withHistory = { ...env, FLEET_REPO: historyRepo };
          // A difference of tens of milliseconds between two medians of ~450 ms: more pairs than
          // the ratio rows, or the median moves with the machine (7 pairs read −7 ms in one run
          // and +89 ms in the next).
          const pairs = interleave({
            runs: Math.max(measuredRuns, 15),
            warmups: 1,
            a: () => checkedDrift(withHistory, expect),
            b: () => checkedDrift(env, expect),
          });
          goals.push(
            deltaRow({
              id: 'drift-history',
              label: `history: ${HISTORY_VERSIONS.toLocaleString('en')} versions of CLAUDE.md add to a drift`,
              workload: `${size} virtual hosts, the same tree at HEAD`,
              fleet: { label: `drift, ${HISTORY_VERSIONS} versions`, samples: pairs.a },
              peer: { label: 'drift, the lab repo', samples: pairs.b },
              goalMs: GOAL_HISTORY_MS,
            }),
          );
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
  }));
  return {
    name,
    description,
    ok: true,
    over: goals.some((g) => g.status === 'OVER'),
    runs: measuredRuns,
    results,
    goals,
  };
}

export function format(result) {
  const columns = [
    { key: 'hosts', label: 'hosts', align: 'right' },
    { key: 'case', label: 'case', align: 'left' },
    { key: 'median', label: 'median', align: 'right' },
    { key: 'perHost', label: 'ms/host', align: 'right' },
    { key: 'marginal', label: 'marginal ms/host', align: 'right' },
  ];
  const rows = result.results.map((r) => ({
    hosts: String(r.hosts),
    case: r.case,
    median: `${r.medianMs} ms`,
    perHost: String(r.perHostMs),
    marginal: r.marginalPerHostMs === null ? '—' : String(r.marginalPerHostMs),
  }));
  return [
    `medians of ${result.runs} runs of \`fleet drift --json\` (CLI start-up included); cost per host kept flat (a floor)`,
    '',
    renderTable(columns, rows),
    '',
    renderGoalRows(result.goals),
  ].join('\n');
}
