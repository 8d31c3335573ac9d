/**
 * `fleet harness reconcile`, the pure parts (contract §10.3): worst state, exit codes, the
 * unattended gate, the state merge (an offline host keeps the time it was first seen pending
 * until a run reaches it) and the rolling log bounded to 500 lines; plus the state files on disk
 * (mode 0600, atomic, a damaged state moved aside, the run lock).
 */
import { expect } from 'chai';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  plannedState,
  reconcileExitCode,
  summarise,
  unattendedRefusal,
  worstState,
  type HostState,
  type ReconcileHost,
  type TargetState,
} from '../src/reconcile/model.js';
import {
  LOG_MAX_LINES,
  STATE_SCHEMA,
  mergeState,
  pendingSince,
  stateProblem,
  trimLog,
  type ReconcileState,
  type RunResult,
} from '../src/reconcile/state.js';
import {
  acquireLock,
  appendLog,
  loadState,
  reconcilePaths,
  saveState,
} from '../src/reconcile/store.js';

const T1 = '2026-05-01T10:00:00.000Z';
const T2 = '2026-05-01T10:30:00.000Z';
const T3 = '2026-05-01T11:00:00.000Z';

function run(now: string, hosts: Record<string, HostState>, fleet = Object.keys(hosts)): RunResult {
  return {
    now,
    canonicalSha: 'c'.repeat(40),
    repoCommit: 'a'.repeat(40),
    mode: 'confirm',
    hosts: Object.entries(hosts).map(([host, state]) => ({ host, state })),
    fleet,
  };
}

const host = (
  name: string,
  state: HostState,
  extra: Partial<ReconcileHost> = {},
): ReconcileHost => ({
  host: name,
  state,
  targets: [],
  ...extra,
});

describe('harness reconcile: states and exit codes', () => {
  it('a host is the worst of its targets: error > diverged > modified > deleted > would-update/updated > current', () => {
    const table: [TargetState[], TargetState][] = [
      [['would-update', 'deleted', 'updated'], 'deleted'],
      [['deleted', 'modified'], 'modified'],
      [['modified', 'diverged', 'deleted'], 'diverged'],
      [['modified', 'error'], 'error'],
      [[], 'current'],
      [['current', 'current', 'current'], 'current'],
      [['current', 'updated', 'current'], 'updated'],
      [['updated', 'would-update'], 'would-update'],
      [['current', 'would-update', 'diverged'], 'diverged'],
      [['updated', 'diverged', 'updated'], 'diverged'],
      [['diverged', 'error', 'current'], 'error'],
      [['error', 'updated'], 'error'],
    ];
    for (const [states, worst] of table)
      expect(worstState(states), states.join(',')).to.equal(worst);
  });

  it('maps drift classifications: stale and missing are healable, diverged never written, the rest error', () => {
    expect(plannedState('current')).to.equal('current');
    expect(plannedState('stale')).to.equal('would-update');
    expect(plannedState('missing')).to.equal('would-update');
    expect(plannedState('diverged')).to.equal('diverged');
    // ucf "Not replacing deleted config file"; a hand change is never history.
    expect(plannedState('deleted')).to.equal('deleted');
    expect(plannedState('modified')).to.equal('modified');
    expect(plannedState('unsupported')).to.equal('error');
    expect(plannedState('error')).to.equal('error');
  });

  it('exits 0 when every host is current or updated, 1 when drift remains, 6 on a failed verification', () => {
    expect(reconcileExitCode([])).to.equal(0);
    expect(reconcileExitCode([host('a', 'current'), host('b', 'updated')])).to.equal(0);
    for (const state of [
      'would-update',
      'deleted',
      'modified',
      'diverged',
      'offline_pending',
      'error',
    ] as const) {
      expect(reconcileExitCode([host('a', 'current'), host('b', state)]), state).to.equal(1);
    }
    expect(
      reconcileExitCode([host('a', 'diverged'), host('b', 'error', { verificationFailed: true })]),
    ).to.equal(6);
  });

  it('exits 4 when a host refused the credentials, whatever the others (contract §7)', () => {
    const denied = host('b', 'error', { denied: true });
    expect(reconcileExitCode([host('a', 'diverged'), denied])).to.equal(4);
    expect(reconcileExitCode([host('a', 'offline_pending'), denied])).to.equal(4);
    expect(reconcileExitCode([denied, host('c', 'error', { verificationFailed: true })])).to.equal(
      4,
    );
  });

  it('summarises hosts per state', () => {
    expect(
      summarise([host('a', 'current'), host('b', 'offline_pending'), host('c', 'current')]),
    ).to.deep.equal({
      hosts: 3,
      current: 2,
      'would-update': 0,
      updated: 0,
      deleted: 0,
      modified: 0,
      diverged: 0,
      error: 0,
      offline_pending: 1,
    });
  });
});

describe('harness reconcile: the unattended gate (generic on the declaration)', () => {
  const none = { kind: 'none' } as const;
  const coupled = {
    kind: 'process',
    actions: [{ kind: 'restart-controller', description: 'restart the controller' }],
  } as const;

  it('allows only with `allow` committed and in the working tree, for a domain without coupling', () => {
    expect(
      unattendedRefusal({
        domain: 'harness-policy',
        coupling: none,
        worktree: 'allow',
        committed: 'allow',
      }),
    ).to.equal(null);
    expect(
      unattendedRefusal({
        domain: 'harness-policy',
        coupling: none,
        worktree: 'deny',
        committed: 'deny',
      }),
    )
      .to.be.a('string')
      .and.include('domains.harness-policy.unattended: allow');
    expect(
      unattendedRefusal({
        domain: 'harness-policy',
        coupling: none,
        worktree: 'allow',
        committed: 'deny',
      }),
    ).to.include('not committed');
    expect(
      unattendedRefusal({
        domain: 'harness-policy',
        coupling: none,
        worktree: 'allow',
        committed: undefined,
      }),
    ).to.include('not committed');
    expect(
      unattendedRefusal({
        domain: 'harness-policy',
        coupling: none,
        worktree: 'deny',
        committed: 'allow',
      }),
    ).to.include('working tree');
  });

  it('refuses any domain whose installer declares a process coupling, whatever fleet.yaml says', () => {
    const why = unattendedRefusal({
      domain: 'transport-identity',
      coupling: coupled,
      worktree: 'allow',
      committed: 'allow',
    });
    expect(why).to.include('process coupling').and.include('restart-controller');
  });
});

describe('harness reconcile: state merge', () => {
  it('records each host under its state, sorted, with last_run and canonical_sha', () => {
    const state = mergeState(
      null,
      run(T1, {
        'node-02': 'updated',
        'node-01': 'current',
        'node-03': 'diverged',
        'node-04': 'modified',
        'node-05': 'deleted',
      }),
    );
    expect(state).to.deep.equal({
      schema: STATE_SCHEMA,
      last_run: T1,
      canonical_sha: 'c'.repeat(40),
      repo_commit: 'a'.repeat(40),
      mode: 'confirm',
      current: ['node-01'],
      updated: ['node-02'],
      would_update: [],
      deleted: ['node-05'],
      modified: ['node-04'],
      diverged: ['node-03'],
      offline_pending: [],
      errors: [],
    } satisfies ReconcileState);
    expect(stateProblem(state)).to.equal(null);
    // A state written before `deleted` and `modified` existed is still a valid one.
    const { deleted: _d, modified: _m, ...older } = state;
    expect(stateProblem(older)).to.equal(null);
  });

  it('keeps the first-seen time of an offline host across runs, and clears it when reached', () => {
    const first = mergeState(null, run(T1, { 'node-01': 'current', 'node-03': 'offline_pending' }));
    expect(first.offline_pending).to.deep.equal([
      { host: 'node-03', first_seen: T1, last_seen: T1 },
    ]);
    const second = mergeState(
      first,
      run(T2, { 'node-01': 'current', 'node-03': 'offline_pending' }),
    );
    expect(second.offline_pending).to.deep.equal([
      { host: 'node-03', first_seen: T1, last_seen: T2 },
    ]);
    expect(pendingSince(second, 'node-03')).to.equal(T1);
    const reached = mergeState(second, run(T3, { 'node-01': 'current', 'node-03': 'updated' }));
    expect(reached.offline_pending).to.deep.equal([]);
    expect(reached.updated).to.deep.equal(['node-03']);
    expect(pendingSince(reached, 'node-03')).to.equal(undefined);
    // Pending again later: a new first-seen time, not the old one.
    const again = mergeState(
      reached,
      run('2026-05-02T00:00:00.000Z', { 'node-03': 'offline_pending' }, ['node-01', 'node-03']),
    );
    expect(pendingSince(again, 'node-03')).to.equal('2026-05-02T00:00:00.000Z');
  });

  it('keeps the entries of hosts a --host run did not visit, and drops hosts no longer in the fleet', () => {
    const before = mergeState(
      null,
      run(T1, {
        'node-01': 'current',
        'node-02': 'diverged',
        'node-03': 'offline_pending',
        'node-04': 'current',
      }),
    );
    const after = mergeState(
      before,
      run(T2, { 'node-01': 'updated' }, ['node-01', 'node-02', 'node-03']),
    );
    expect(after.updated).to.deep.equal(['node-01']);
    expect(after.current).to.deep.equal([]); // node-04 left the fleet
    expect(after.diverged).to.deep.equal(['node-02']);
    expect(after.offline_pending).to.deep.equal([
      { host: 'node-03', first_seen: T1, last_seen: T1 },
    ]);
    expect(stateProblem(after)).to.equal(null);
  });

  it('refuses damaged state documents', () => {
    const good = mergeState(null, run(T1, { a: 'current' }));
    expect(stateProblem(null)).to.be.a('string');
    expect(stateProblem({ ...good, schema: 'other' })).to.include('schema');
    expect(stateProblem({ ...good, extra: 1 })).to.include('unknown field');
    expect(stateProblem({ ...good, updated: ['a'] })).to.include('listed twice');
    expect(
      stateProblem({
        ...good,
        offline_pending: [{ host: 'b', first_seen: 'never', last_seen: T1 }],
      }),
    ).to.include('times');
  });
});

describe('harness reconcile: the rolling log', () => {
  it('appends lines and keeps the last 500', () => {
    expect(LOG_MAX_LINES).to.equal(500);
    expect(trimLog('', ['a', 'b'])).to.equal('a\nb\n');
    expect(trimLog('a\nb\n', ['c'])).to.equal('a\nb\nc\n');
    const existing = Array.from({ length: 499 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const trimmed = trimLog(existing, ['new 1', 'new 2', 'new 3']);
    const lines = trimmed.split('\n').slice(0, -1);
    expect(lines).to.have.length(500);
    expect(lines[0]).to.equal('line 2');
    expect(lines[499]).to.equal('new 3');
    expect(
      trimLog(
        'x\n',
        Array.from({ length: 600 }, (_, i) => String(i)),
      )
        .split('\n')
        .slice(0, -1),
    ).to.have.length(500);
  });

  it('keeps one entry one line, and a partial last line as a line', () => {
    expect(trimLog('half', ['next\nwith newline'])).to.equal('half\nnext with newline\n');
    expect(trimLog('', [], 500)).to.equal('');
    expect(() => trimLog('', ['a'], 0)).to.throw(RangeError);
  });
});

describe('harness reconcile: state files on disk', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-reconcile-state-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('lives in $XDG_STATE_HOME/fleet, mode 0600, written atomically (no temp file left)', async () => {
    const paths = reconcilePaths({ XDG_STATE_HOME: dir });
    expect(paths.state).to.equal(join(dir, 'fleet', 'harness-reconcile.json'));
    expect(paths.log).to.equal(join(dir, 'fleet', 'harness-reconcile.log'));
    const state = mergeState(null, run(T1, { a: 'offline_pending' }));
    await saveState(paths, state);
    await appendLog(paths, ['one', 'two']);
    for (const file of [paths.state, paths.log])
      expect((await stat(file)).mode & 0o777, file).to.equal(0o600);
    expect((await stat(paths.dir)).mode & 0o777).to.equal(0o700);
    expect((await readdir(paths.dir)).sort()).to.deep.equal([
      'harness-reconcile.json',
      'harness-reconcile.log',
    ]);
    expect((await loadState(paths, new Date(T2))).state).to.deep.equal(state);
    await appendLog(
      paths,
      Array.from({ length: 700 }, (_, i) => `l${i}`),
    );
    const log = (await readFile(paths.log, 'utf8')).split('\n').slice(0, -1);
    expect(log).to.have.length(500);
    expect(log[499]).to.equal('l699');
  });

  it('moves a damaged state aside and starts from no memory', async () => {
    const paths = reconcilePaths({ XDG_STATE_HOME: dir });
    await saveState(paths, mergeState(null, run(T1, { a: 'current' })));
    await writeFile(paths.state, '{"schema": "fleet.reconcile-state/v1", ');
    const loaded = await loadState(paths, new Date(T2));
    expect(loaded.state).to.equal(null);
    expect(loaded.problem).to.be.a('string');
    expect(loaded.movedTo).to.match(/harness-reconcile\.json\.damaged-/);
    expect(await readFile(loaded.movedTo as string, 'utf8')).to.include('fleet.reconcile-state/v1');
  });

  it('holds a run lock: a live holder refuses (LOCKED), an abandoned one is taken over', async () => {
    const paths = reconcilePaths({ XDG_STATE_HOME: dir });
    const release = await acquireLock(paths, new Date(T1));
    // Held by a live process other than this one: the parent of this test process.
    await writeFile(paths.lock, JSON.stringify({ pid: process.ppid, since: T1 }));
    let code: string | undefined;
    try {
      await acquireLock(paths, new Date(T2));
    } catch (error) {
      code = (error as { code?: string }).code;
    }
    expect(code).to.equal('LOCKED');
    // Abandoned: a pid that is not running.
    await writeFile(paths.lock, JSON.stringify({ pid: 2 ** 22 + 12345, since: T1 }));
    const again = await acquireLock(paths, new Date(T3));
    await again();
    await release();
    expect(await readdir(paths.dir)).to.deep.equal([]);
  });
});
