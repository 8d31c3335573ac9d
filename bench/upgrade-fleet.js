// `fleet upgrade` over 10 hosts against one host's upgrade (issue 36; contract §14, goal ≤ 3×):
// a lab of 11 real controllers (`fleet lab up --hosts 11`), two builds made by `fleet lab build`
// (packed, signed by the lab's key), and the canonical version flipped between them before each
// pair of samples, so every timed upgrade is a real one — stage (the node holds both generations
// after the untimed first round: nothing uploaded), activate, restart, acceptance. Side A:
// `fleet upgrade node-01 --confirm`; side B: `fleet upgrade --host node-02 … --host node-11
// --confirm` (a canary, then the rest 8 at a time, the default). The order alternates per pair.
// Every run must end accepted on every host it names (a correctness check). Needs `ssh-keygen`
// (the lab signs its builds) and a checkout that packs (`npm pack -w packages/cli`): about
// 3 minutes of setup on a quiet 2-core machine, then about a minute per pair.
//
// Every node of the lab runs on this one machine, so the ten hosts' stages, runners and restarts
// share its cores where a real fleet's hosts each have their own. The row's note says how much
// CPU each side used (the whole machine's busy time during the call, `os.cpus()`: meaningful on
// a quiet machine only) and the floor that sets: ten hosts cannot finish before their CPU time
// divided by the cores, however well the upgrade overlaps them.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv, ratioRow, renderGoalRows, repoRoot } from './lib.js';

export const name = 'upgrade-fleet';
export const description =
  'fleet upgrade over 10 lab hosts (a canary, then 8 at a time) vs one host, real restarts';

const FLEET = path.join(repoRoot, 'packages', 'cli', 'bin', 'run.js');
const FLEET_HOSTS = 10;
const GOAL = 3;
const V1 = '0.1.0-bench.1';
const V2 = '0.1.0-bench.2';

function fleet(args, env, { check = true } = {}) {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [FLEET, ...args], {
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (check && run.status !== 0) {
    throw new Error(
      `fleet ${args.slice(0, 4).join(' ')} exited ${run.status}: ${run.stderr.trim().slice(-800)}`,
    );
  }
  return { ms, stdout: run.stdout, stderr: run.stderr, status: run.status };
}

/** CPU-milliseconds the whole machine has spent busy since boot, all cores together. */
function busyMs() {
  return cpus().reduce(
    (sum, { times }) => sum + times.user + times.nice + times.sys + times.irq,
    0,
  );
}

/** The median of `values`. */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** What the CPU accounting says of the two sides (see the header). */
function cpuNote(samples) {
  const cores = cpus().length;
  const oneCpu = median(samples.cpuA) / 1000;
  const manyCpu = median(samples.cpuB) / 1000;
  const oneWall = median(samples.a) / 1000;
  const manyWall = median(samples.b) / 1000;
  const floor = manyCpu / cores;
  return (
    `CPU (the machine's busy time, ${cores} cores): one host ${oneCpu.toFixed(1)} s in ` +
    `${oneWall.toFixed(1)} s; ${FLEET_HOSTS} hosts ${manyCpu.toFixed(1)} s ` +
    `(${(manyCpu / FLEET_HOSTS).toFixed(2)} s a host) in ${manyWall.toFixed(1)} s, against a ` +
    `floor of ${floor.toFixed(1)} s (${(floor / oneWall).toFixed(2)}× one host) that no overlap ` +
    `can go under on ${cores} cores`
  );
}

function git(repo, ...args) {
  const run = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args[0]}: ${run.stderr}`);
  return run.stdout;
}

/** Makes `version` canonical in the lab repository's fleet.yaml, committed. */
function makeCanonical(repo, version) {
  const file = path.join(repo, 'fleet.yaml');
  const text = readFileSync(file, 'utf8');
  const next = text.replace(/^canonicalVersion: .*$/m, `canonicalVersion: ${version}`);
  if (next === text) return;
  writeFileSync(file, next);
  git(repo, 'add', 'fleet.yaml');
  git(
    repo,
    '-c',
    'user.name=bench',
    '-c',
    'user.email=bench@example.invalid',
    'commit',
    '-q',
    '-m',
    `bench: canonical ${version}`,
  );
}

/** Checks that every named host ended accepted (a correctness check of the row). */
function accepted(run, hosts) {
  const document = JSON.parse(run.stdout);
  const outcomes = document.hosts
    ? document.hosts.map((h) => [h.host, h.outcome])
    : [[document.host, document.outcome]];
  const bad = outcomes.filter(([host, outcome]) => !hosts.includes(host) || outcome !== 'accepted');
  if (bad.length > 0 || outcomes.length !== hosts.length) {
    throw new Error(`not every host accepted: ${JSON.stringify(outcomes)}`);
  }
  return run;
}

export async function run({ runs = 3 } = {}) {
  const pairs = Math.max(1, Math.min(runs, 3));
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-upgrade-'));
  const lab = path.join(dir, 'lab');
  const state = path.join(dir, 'state');
  mkdirSync(state, { recursive: true });
  let env = cleanEnv({ XDG_STATE_HOME: state });
  try {
    const up = fleet(
      ['lab', 'up', '--hosts', String(FLEET_HOSTS + 1), '--dir', lab, '--json'],
      env,
    );
    const document = JSON.parse(up.stdout);
    env = cleanEnv({
      XDG_STATE_HOME: state,
      FLEET_REPO: document.repo,
      FLEET_CREDENTIALS: document.credentials,
    });
    const hosts = document.hosts.map((h) => h.name);
    const single = hosts[0];
    const many = hosts.slice(1, FLEET_HOSTS + 1);
    const manyArgs = many.flatMap((h) => ['--host', h]);
    fleet(['lab', 'build', '--dir', lab, '--version', V2], env);
    fleet(['lab', 'build', '--dir', lab, '--version', V1, '--canonical'], env);
    // Untimed: every host stages both builds once (uploaded), so the timed ones reuse them.
    const all = ['--host', single, ...manyArgs];
    accepted(fleet(['upgrade', ...all, '--concurrency', '11', '--confirm', '--json'], env), hosts);
    makeCanonical(document.repo, V2);
    accepted(fleet(['upgrade', ...all, '--concurrency', '11', '--confirm', '--json'], env), hosts);
    const samples = { a: [], b: [], cpuA: [], cpuB: [] };
    for (let i = 0; i < pairs; i += 1) {
      makeCanonical(document.repo, i % 2 === 0 ? V1 : V2);
      const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
      for (const side of order) {
        const busyBefore = busyMs();
        const timed =
          side === 'a'
            ? accepted(fleet(['upgrade', single, '--confirm', '--json'], env), [single])
            : accepted(fleet(['upgrade', ...manyArgs, '--confirm', '--json'], env), many);
        samples[side].push(timed.ms);
        samples[side === 'a' ? 'cpuA' : 'cpuB'].push(busyMs() - busyBefore);
      }
    }
    const row = ratioRow({
      id: 'upgrade-fleet',
      label: `fleet upgrade over ${FLEET_HOSTS} hosts vs one host`,
      workload: `lab, ${FLEET_HOSTS} hosts (canary + 8 at a time) vs 1; generations held`,
      fleet: { label: `upgrade --host ×${FLEET_HOSTS}`, samples: samples.b },
      peer: { label: 'upgrade HOST', samples: samples.a },
      goal: GOAL,
      note: cpuNote(samples),
    });
    return {
      name,
      description,
      ok: true,
      over: row.status === 'OVER',
      pairs,
      goals: [row],
    };
  } finally {
    fleet(['lab', 'down', '--dir', lab], env, { check: false });
    // Staged generations are read-only (0444/0555): made writable before they are removed.
    spawnSync('chmod', ['-R', 'u+w', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

export function format(result) {
  const notes = result.goals.filter((row) => row.note).map((row) => `${row.id}: ${row.note}`);
  return [renderGoalRows(result.goals), ...notes].join('\n');
}
