// fleet against the tools it replaces (contract §14), each row interleaved in one run on the same
// files: dotdrop on one host, Ansible on ten. The workload is bench/workload/files.js — five
// templated whole files per host, served by the bench-only domain `bench-files`
// (bench/workload/plugin, linked into an isolated oclif data directory for this run only) — on a
// virtual lab of 10 hosts (`fleet lab up --virtual`): every tool reads and writes the same
// per-host directories, the lab nodes' homes. bench/README.md describes the workload and why each
// side is configured as it is.
//
// "Drifted" is the state before every timed run of a row: each host holds the version of every
// file that the repository published before its current one (`stale` to fleet, a diff to the
// peers), written again before each install run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  cleanEnv,
  interleave,
  onPath,
  ratioRow,
  renderGoalRows,
  repoRoot,
  skippedRow,
  timeCommand,
  withAutoStartedResident,
} from './lib.js';
import { FILES, dotdropTemplate, render } from './workload/files.js';

export const name = 'peers';
export const description =
  'fleet vs dotdrop (one host) and Ansible (10 hosts) on the same 5 templated files (contract §14)';

const CLI = path.join(repoRoot, 'packages/cli/bin/run.js');
const PLUGIN = path.join(repoRoot, 'bench/workload/plugin');
const DOMAIN = 'bench-files';
const HOSTS = 10;
const HARNESS_PATHS = ['~/.claude/CLAUDE.md', '~/.codex/AGENTS.md', '~/.gemini/GEMINI.md'];

// One host (issue 41): a call in its own process, drift ≤ 1.0× and install ≤ 1.15× dotdrop; with
// the resident process, both ≤ 0.8×.
const GOALS = {
  oneHost: { drift: 1.0, install: 1.15 },
  resident: { drift: 0.8, install: 0.8 },
  apply: 0.05,
  drift: 0.02,
};
const oneHostGoals = (resident) => (resident ? GOALS.resident : GOALS.oneHost);
// Rows measured beside contract §14's for what they show, with no goal of their own: the 10-host
// install goal is one `fleet apply --confirm`'s (bench/README.md).
const REFERENCE = undefined;
const install = (tool) => `not installed: apt-get install ${tool}`;

/** Every fleet run of this benchmark: the CLI as the operator runs it, start-up included. */
function fleetRun(env, args, accept = [0]) {
  const run = timeCommand(process.execPath, [CLI, ...args], { env });
  if (!accept.includes(run.status)) {
    throw new Error(`fleet ${args.join(' ')} exited ${run.status}: ${run.stderr.slice(0, 600)}`);
  }
  return run;
}

function homePath(home, nodePath) {
  return path.join(home, nodePath.slice(2));
}

function writeFile0600(file, content) {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, content, { mode: 0o600 });
}

/** The lab, the published v2 of the workload, and each host's variables. */
async function setUp(work) {
  const oclif = Object.fromEntries(
    ['DATA', 'CONFIG', 'CACHE'].map((k) => [`FLEET_${k}_DIR`, path.join(work, `oclif-${k}`)]),
  );
  // The operator's own state (the audit heads kept after every verb, the operator log) in the
  // run's directory too, as dotdrop and Ansible get their own homes: a shared machine's state
  // holds other labs' heads (a 1,000-host lab's: megabytes), which every fleet call would read and
  // rewrite, and this run would leave its own heads behind in it.
  const base = cleanEnv({
    OCLIF_SKIP_NEW_VERSION_CHECK: 'true',
    XDG_STATE_HOME: path.join(work, 'operator-state'),
    ...oclif,
  });
  fleetRun(base, ['plugins', 'link', PLUGIN, '--no-install']);
  const dir = path.join(work, 'lab');
  const up = fleetRun(base, [
    'lab',
    'up',
    '--virtual',
    '--hosts',
    String(HOSTS),
    '--dir',
    dir,
    '--json',
  ]);
  const lab = JSON.parse(up.stdout);
  const env = { ...base, FLEET_REPO: lab.repo, FLEET_CREDENTIALS: lab.credentials };
  // Each node serves the bench domain because its own policy says so (contract §5.1): the lab
  // writes policies for the bundled domains only. A changed policy is read at the next request.
  const { parse, stringify } = await import('yaml');
  for (const host of lab.hosts) {
    const file = path.join(host.home, '.config', 'fleet', 'node-policy.yaml');
    const policy = parse(readFileSync(file, 'utf8'));
    policy.domains[DOMAIN] = {};
    writeFileSync(file, stringify(policy), { mode: 0o600 });
  }
  // The current version of each file, published over the one the lab's repository started with.
  for (const file of FILES) {
    writeFileSync(path.join(lab.repo, 'domains', DOMAIN, file.canonical), file.current);
  }
  const git = (...args) =>
    execFileSync('git', [
      '-C',
      lab.repo,
      '-c',
      'user.name=bench',
      '-c',
      'user.email=bench@localhost',
      ...args,
    ]);
  git('add', '-A');
  git('commit', '-q', '-m', 'bench: the current version of the workload');
  const core = await import(
    pathToFileURL(path.join(repoRoot, 'packages/core/dist/src/index.js')).href
  );
  const repo = await core.loadRepo(lab.repo);
  const hosts = lab.hosts.map((host) => ({
    ...host,
    variables: core.hostVariables(repo, host.name),
  }));
  return { env, dir, lab, hosts };
}

/** Every host (or the given ones) back to the drifted state: each file's published version. */
function drift(hosts) {
  for (const host of hosts) {
    for (const file of FILES) {
      writeFile0600(homePath(host.home, file.path), render(file.published, host.variables));
    }
  }
}

function expectCurrent(hosts) {
  for (const host of hosts) {
    for (const file of FILES) {
      const live = readFileSync(homePath(host.home, file.path), 'utf8');
      if (live !== render(file.current, host.variables)) {
        throw new Error(`${host.name}: ${file.path} is not the current version after the install`);
      }
    }
  }
}

/** dotdrop's side of the one-host rows: the same templates, the host's own home. */
function dotdropSetUp(work, host) {
  const dir = path.join(work, 'dotdrop');
  mkdirSync(path.join(dir, 'dotfiles'), { recursive: true });
  const lines = [
    'config:',
    '  dotpath: dotfiles',
    '  banner: false',
    '  create: true',
    'dotfiles:',
  ];
  for (const file of FILES) {
    writeFileSync(path.join(dir, 'dotfiles', file.id), dotdropTemplate(file.current));
    lines.push(
      `  f_${file.id.replace(/\W/g, '_')}:`,
      `    src: ${file.id}`,
      `    dst: ${homePath(host.home, file.path)}`,
    );
  }
  lines.push('profiles:', `  ${host.name}:`, '    dotfiles:');
  for (const file of FILES) lines.push(`      - f_${file.id.replace(/\W/g, '_')}`);
  lines.push('    variables:', '      host:');
  for (const [key, value] of Object.entries(host.variables))
    lines.push(`        ${key}: ${JSON.stringify(value)}`);
  writeFileSync(path.join(dir, 'config.yaml'), `${lines.join('\n')}\n`);
  const env = cleanEnv({ HOME: path.join(work, 'dotdrop-home') });
  const run = (verb, extra) => {
    const result = timeCommand(
      'dotdrop',
      [verb, '-b', '-c', path.join(dir, 'config.yaml'), '-p', host.name, ...extra],
      {
        env,
        cwd: dir,
      },
    );
    if (result.status !== 0 && !(verb === 'compare' && result.status === 1)) {
      throw new Error(
        `dotdrop ${verb} exited ${result.status}: ${(result.stderr || result.stdout).slice(0, 600)}`,
      );
    }
    return result;
  };
  return { compare: () => run('compare', []), install: () => run('install', ['-f']) };
}

/**
 * The ids and labels of the one-host rows (drift, then install): each call in its own process, as
 * fleet runs by default, or with the resident process (`FLEET_RESIDENT=auto`).
 */
function oneHostRowNames(resident) {
  const id = resident ? '-resident' : '';
  const label = resident ? ', with the resident process (FLEET_RESIDENT=auto)' : '';
  return [
    { id: `one-host-drift${id}`, label: `one host: drift vs dotdrop compare${label}` },
    { id: `one-host-install${id}`, label: `one host: config install vs dotdrop install${label}` },
  ];
}

/**
 * The one-host rows, drift then install, each interleaved against dotdrop on the same host: each
 * call in its own process, or — given `firstCallMs`, the call that found no resident and started
 * one — with the resident process.
 */
function oneHostRows({ host, dotdrop, workload, runs, warmups, env, firstCallMs }) {
  const one = [host];
  const resident = firstCallMs !== undefined;
  const [driftName, installName] = oneHostRowNames(resident);
  const fleetLabel = (verb) => `fleet ${verb}${resident ? ' (resident)' : ''}`;
  drift(one);
  const compare = interleave({
    runs,
    warmups,
    a: () => fleetRun(env, ['drift', '--host', host.name, '--domain', DOMAIN, '--json'], [1]),
    b: () => dotdrop.compare(),
  });
  const installs = interleave({
    runs,
    warmups,
    prepare: () => drift(one),
    a: () => {
      const r = fleetRun(env, ['config', 'install', host.name, DOMAIN, '--confirm', '--json']);
      expectCurrent(one);
      return r;
    },
    b: () => {
      const r = dotdrop.install();
      expectCurrent(one);
      return r;
    },
  });
  return [
    ratioRow({
      ...driftName,
      workload,
      fleet: { label: fleetLabel('drift'), samples: compare.a },
      peer: { label: 'dotdrop compare', samples: compare.b },
      goal: oneHostGoals(resident).drift,
      ...(resident
        ? {
            note: `the first call, which found no resident and started one as it ended: ${firstCallMs.toFixed(1)} ms`,
          }
        : {}),
    }),
    ratioRow({
      ...installName,
      workload,
      fleet: { label: fleetLabel('config install'), samples: installs.a },
      peer: { label: 'dotdrop install', samples: installs.b },
      goal: oneHostGoals(resident).install,
    }),
  ];
}

/** Ansible's side: 10 hosts as local connections, each writing into its lab node's home. */
function ansibleSetUp(work, hosts, harness) {
  const dir = path.join(work, 'ansible');
  mkdirSync(path.join(dir, 'templates'), { recursive: true });
  for (const file of FILES) writeFileSync(path.join(dir, 'templates', file.id), file.current);
  const inventory = ['all:', '  hosts:'];
  for (const host of hosts) {
    const vars = Object.entries(host.variables)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', ');
    inventory.push(
      `    ${host.name}: { node_home: ${JSON.stringify(host.home)}, host: { ${vars} } }`,
    );
  }
  inventory.push(
    '  vars:',
    '    ansible_connection: local',
    '    ansible_python_interpreter: /usr/bin/python3',
  );
  writeFileSync(path.join(dir, 'inventory.yaml'), `${inventory.join('\n')}\n`);
  const loop = (items) => items.map((item) => `        - ${JSON.stringify(item)}`).join('\n');
  writeFileSync(
    path.join(dir, 'files.yaml'),
    `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: the five workload files\n      ansible.builtin.template:\n        src: "templates/{{ item.src }}"\n        dest: "{{ node_home }}/{{ item.dest }}"\n        mode: "0600"\n      loop:\n${loop(FILES.map((f) => ({ src: f.id, dest: f.path.slice(2) })))}\n`,
  );
  // The harness-policy files as `harness reconcile` leaves them, per host (copied, not templated).
  for (const host of hosts) {
    for (const [i, nodePath] of HARNESS_PATHS.entries()) {
      writeFile0600(
        path.join(dir, 'harness', host.name, String(i)),
        harness.get(`${host.name} ${nodePath}`),
      );
    }
  }
  writeFileSync(
    path.join(dir, 'harness.yaml'),
    `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: the harness-policy files\n      ansible.builtin.copy:\n        src: "harness/{{ inventory_hostname }}/{{ item.src }}"\n        dest: "{{ node_home }}/{{ item.dest }}"\n        mode: "0600"\n      loop:\n${loop(HARNESS_PATHS.map((p, i) => ({ src: String(i), dest: p.slice(2) })))}\n`,
  );
  const env = cleanEnv({
    ANSIBLE_FORKS: String(HOSTS),
    ANSIBLE_RETRY_FILES_ENABLED: 'false',
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_LOCALHOST_WARNING: 'false',
    ANSIBLE_HOME: path.join(dir, 'home'),
    ANSIBLE_LOCAL_TEMP: path.join(dir, 'tmp'),
    ANSIBLE_REMOTE_TEMP: path.join(dir, 'remote-tmp'),
    ANSIBLE_GATHERING: 'explicit',
  });
  const run = (playbook, extra = []) => {
    const result = timeCommand('ansible-playbook', ['-i', 'inventory.yaml', playbook, ...extra], {
      env,
      cwd: dir,
    });
    if (result.status !== 0) {
      throw new Error(
        `ansible-playbook ${playbook} exited ${result.status}: ${result.stdout.slice(-800)}`,
      );
    }
    return result;
  };
  return {
    apply: () => run('files.yaml'),
    check: () => run('files.yaml', ['--check', '--diff']),
    harness: () => run('harness.yaml'),
  };
}

export async function run({ runs = 15, warmups = 1 } = {}) {
  const work = mkdtempSync(path.join(tmpdir(), 'fleet-bench-peers-'));
  const rows = [];
  // Ansible's runs take seconds each: fewer of them keep `npm run bench` within ~10 minutes.
  const slowRuns = Math.max(3, Math.min(runs, 5));
  const fastRuns = Math.max(5, Math.min(runs, 11));
  let setup;
  try {
    setup = await setUp(work);
    const { env, hosts } = setup;
    const [first] = hosts;

    // --- one host, 5 files: fleet vs dotdrop --------------------------------------------------
    const workload1 = `1 host × ${FILES.length} templated files`;
    if (!onPath('dotdrop')) {
      for (const resident of [false, true]) {
        const [driftName, installName] = oneHostRowNames(resident);
        const goals = oneHostGoals(resident);
        for (const [name, goal] of [
          [driftName, goals.drift],
          [installName, goals.install],
        ])
          rows.push(
            skippedRow({
              ...name,
              workload: workload1,
              goal,
              reason: install('dotdrop'),
            }),
          );
      }
    } else {
      const dotdrop = dotdropSetUp(work, first);
      const oneHost = { host: first, dotdrop, workload: workload1, runs: fastRuns };
      rows.push(...oneHostRows({ ...oneHost, env, warmups }));
      // The same two rows with the operator's resident process (docs/resident.md), as
      // FLEET_RESIDENT=auto runs it: the first call finds none, runs in its own process and starts
      // one as it ends; the rows' calls then pay Node.js's start and a socket, not loading fleet.
      // Two warm-up pairs: the resident's first calls compile what later calls reuse.
      drift([first]);
      const firstCall = {
        args: ['drift', '--host', first.name, '--domain', DOMAIN, '--json'],
        accept: [1],
      };
      await withAutoStartedResident(CLI, work, env, firstCall, (residentEnv, firstCallMs) => {
        rows.push(...oneHostRows({ ...oneHost, env: residentEnv, warmups: 2, firstCallMs }));
      });
    }

    // --- 10 hosts, all drifted: fleet vs Ansible ----------------------------------------------
    const workload10 = `${HOSTS} hosts × ${FILES.length} templated files, all drifted`;
    if (!onPath('ansible-playbook')) {
      for (const [id, label, goal] of [
        [
          'apply-installs',
          `${HOSTS} hosts: ten config install calls vs ansible-playbook`,
          REFERENCE,
        ],
        ['apply-fleet', `${HOSTS} hosts: fleet apply --confirm vs ansible-playbook`, GOALS.apply],
        [
          'apply-reconcile',
          `${HOSTS} hosts: harness reconcile --confirm vs ansible-playbook`,
          REFERENCE,
        ],
        ['drift-check', `${HOSTS} hosts: drift vs ansible-playbook --check --diff`, GOALS.drift],
      ])
        rows.push(
          skippedRow({ id, label, workload: workload10, goal, reason: install('ansible') }),
        );
    } else {
      // The harness files as reconcile writes them: the reference the Ansible side copies.
      for (const host of hosts)
        for (const p of HARNESS_PATHS) rmSync(homePath(host.home, p), { force: true });
      fleetRun(env, ['harness', 'reconcile', '--confirm', '--json']);
      const harness = new Map();
      for (const host of hosts)
        for (const p of HARNESS_PATHS)
          harness.set(`${host.name} ${p}`, readFileSync(homePath(host.home, p), 'utf8'));
      const ansible = ansibleSetUp(work, hosts, harness);

      const applies = interleave({
        runs: slowRuns,
        warmups,
        prepare: () => drift(hosts),
        a: () => {
          const start = process.hrtime.bigint();
          for (const host of hosts)
            fleetRun(env, ['config', 'install', host.name, DOMAIN, '--confirm', '--json']);
          const ms = Number(process.hrtime.bigint() - start) / 1e6;
          expectCurrent(hosts);
          return { ms };
        },
        b: () => {
          const r = ansible.apply();
          expectCurrent(hosts);
          return r;
        },
      });
      rows.push(
        ratioRow({
          id: 'apply-installs',
          label: `${HOSTS} hosts: ten config install calls vs ansible-playbook`,
          workload: workload10,
          fleet: { label: `${HOSTS}× fleet config install`, samples: applies.a },
          peer: { label: 'ansible-playbook', samples: applies.b },
          goal: REFERENCE,
          note: 'one CLI process per host: the fixed cost of a call ten times (reference, no goal)',
        }),
      );

      // Contract §14's row: ONE `fleet apply --confirm` over the ten hosts (plan, then install
      // per host concurrently) against the same Ansible apply.
      const fleetApplies = interleave({
        runs: slowRuns,
        warmups,
        prepare: () => drift(hosts),
        a: () => {
          const r = fleetRun(env, ['apply', '--domain', DOMAIN, '--confirm', '--json']);
          expectCurrent(hosts);
          return r;
        },
        b: () => {
          const r = ansible.apply();
          expectCurrent(hosts);
          return r;
        },
      });
      rows.push(
        ratioRow({
          id: 'apply-fleet',
          label: `${HOSTS} hosts: fleet apply --confirm vs ansible-playbook`,
          workload: workload10,
          fleet: { label: 'fleet apply --confirm', samples: fleetApplies.a },
          peer: { label: 'ansible-playbook', samples: fleetApplies.b },
          goal: GOALS.apply,
          note: 'one fleet process for the whole fleet, hosts installed concurrently',
        }),
      );

      // Hosts fleet never wrote to: the files and the node's record of fleet's writes go. With the
      // record kept, a file fleet wrote and someone removed is `deleted`, which reconcile never
      // recreates (contract §8.2) — the workload is first-time hosts, as on Ansible's side.
      const missingHarness = () => {
        for (const host of hosts) {
          for (const p of HARNESS_PATHS) rmSync(homePath(host.home, p), { force: true });
          rmSync(homePath(host.home, '~/.local/state/fleet/written.json'), { force: true });
        }
      };
      const expectHarness = () => {
        for (const host of hosts)
          for (const p of HARNESS_PATHS)
            if (readFileSync(homePath(host.home, p), 'utf8') !== harness.get(`${host.name} ${p}`))
              throw new Error(`${host.name}: ${p} differs after the run`);
      };
      const reconciles = interleave({
        runs: slowRuns,
        warmups,
        prepare: missingHarness,
        a: () => {
          const r = fleetRun(env, ['harness', 'reconcile', '--confirm', '--json']);
          expectHarness();
          return r;
        },
        b: () => {
          const r = ansible.harness();
          expectHarness();
          return r;
        },
      });
      rows.push(
        ratioRow({
          id: 'apply-reconcile',
          label: `${HOSTS} hosts: harness reconcile --confirm vs ansible-playbook`,
          workload: `${HOSTS} hosts × ${HARNESS_PATHS.length} harness-policy files, all missing`,
          fleet: { label: 'fleet harness reconcile', samples: reconciles.a },
          peer: { label: 'ansible-playbook (copy)', samples: reconciles.b },
          goal: REFERENCE,
          note: 'one fleet process for the whole fleet; Ansible copies the pre-rendered files (reference, no goal)',
        }),
      );

      drift(hosts);
      const checks = interleave({
        runs: slowRuns,
        warmups,
        a: () => {
          const r = fleetRun(env, ['drift', '--domain', DOMAIN, '--json'], [1]);
          const { summary } = JSON.parse(r.stdout);
          if (summary.drifted !== HOSTS)
            throw new Error(`drift found ${summary.drifted} drifted hosts, not ${HOSTS}`);
          return r;
        },
        b: () => ansible.check(),
      });
      rows.push(
        ratioRow({
          id: 'drift-check',
          label: `${HOSTS} hosts: drift vs ansible-playbook --check --diff`,
          workload: workload10,
          fleet: { label: 'fleet drift', samples: checks.a },
          peer: { label: 'ansible-playbook --check --diff', samples: checks.b },
          goal: GOALS.drift,
        }),
      );
    }
  } finally {
    if (setup) fleetRun(setup.env, ['lab', 'down', '--dir', setup.dir], [0, 1, 2, 3, 5]);
    rmSync(work, { recursive: true, force: true });
  }
  const bytes = FILES.reduce(
    (n, f) =>
      n +
      Buffer.byteLength(
        render(f.current, { node_id: 'node-01', bench_role: 'node-01-bench-role' }),
      ),
    0,
  );
  return {
    name,
    description,
    ok: true,
    over: rows.some((r) => r.status === 'OVER'),
    workload: { files: FILES.map((f) => f.path), bytesPerHost: bytes },
    goals: rows,
  };
}

export function format(result) {
  return [
    `workload: ${result.workload.files.length} files per host (${result.workload.bytesPerHost} bytes rendered for node-01): ${result.workload.files.join(', ')}`,
    '',
    renderGoalRows(result.goals),
    ...result.goals.filter((r) => r.note).map((r) => `note: ${r.label}: ${r.note}`),
  ].join('\n');
}
