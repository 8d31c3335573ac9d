/**
 * The reconcile engine against a real fleet repository (a temporary git repo with two published
 * versions of the canonical CLAUDE.md) and fake transports: hosts answer from a table, installs
 * are recorded and answered with receipts. What it checks is what `fleet harness reconcile`
 * decides per host and what it sends — the lab end-to-end tests (test/e2e/reconcile.test.ts)
 * check the same through real controllers.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FleetError,
  createGit,
  domainRuntime,
  identityArgs,
  loadRepo,
  prepareAssessment,
  scaffoldFleetRepo,
  type Assessment,
  type DomainRuntime,
  type InstallRequest,
  type LiveFile,
  type OperatorVerb,
  type Receipt,
} from '@fleet/core';
import { registryFromHooks } from '@fleet/testkit';
import { extractPolicySection, spliceBlock } from '../src/block.js';
import { harnessPolicyDomain, POLICY_MARKERS } from '../src/domain.js';
import register from '../src/register.js';
import { reconcileHosts, RECONCILE_VERB, type InstallCall } from '../src/reconcile/engine.js';
import {
  reconcileExitCode,
  type ReconcileHost,
  type ReconcileMode,
} from '../src/reconcile/model.js';

const plugin = { name: '@fleet/plugin-harness-policy', version: '0.1.0', type: 'core' };
const DOMAIN = 'harness-policy';
const CLAUDE = '~/.claude/CLAUDE.md';
const AGENTS = '~/.codex/AGENTS.md';
const GEMINI = '~/.gemini/GEMINI.md';
const B = POLICY_MARKERS.begin;
const E = POLICY_MARKERS.end;
const HOSTS = ['node-01', 'node-02', 'node-03', 'node-04', 'node-05', 'node-06'];

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const V2 = `# Agent policy, second edition

Rewritten from the first line to the last.

${B}
## Rules

- Small steps, each reviewed.
- Secrets are referred to by name only.
- Destructive operations need a human's yes.
${E}
`;

/** A user's own AGENTS.md / GEMINI.md with the policy block of `canonical` in it. */
const withBlock = (canonical: string): string =>
  spliceBlock('# My own notes\n\nKeep these.\n', extractPolicySection(canonical), POLICY_MARKERS);

const present = (content: string): LiveFile => ({
  kind: 'present',
  content,
  sha256: sha256(content),
});
const absent: LiveFile = { kind: 'absent' };
/** A file fleet wrote (the node's record) that someone removed since. */
const removed = (content: string): LiveFile => ({
  kind: 'absent',
  writes: [
    {
      sha256: sha256(content),
      at: '2026-04-01T10:00:00.000Z',
      operationId: '01J00000000000000000000ZZZ',
    },
  ],
});
/** V2 with one of its lines deleted by hand: every line known, the whole not. */
const withoutALine = (text: string): string =>
  text.replace('- Secrets are referred to by name only.\n', '');

describe('harness reconcile engine (real repo history, fake transports)', function () {
  this.timeout(30_000);
  let root: string;
  let runtime: DomainRuntime;
  let v1: string;
  let live: Map<string, Map<string, LiveFile> | 'unreachable'>;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-reconcile-engine-'));
    await scaffoldFleetRepo({ dir: root, domains: [harnessPolicyDomain], exampleHost: 'node-01' });
    const hosts = HOSTS.map(
      (name) =>
        `  ${name}:\n    controller: "http://127.0.0.1:9"\n    platform: linux\n    supervisor: none\n    upgrade: { strategy: tarball }\n    domains: [harness-policy]\n`,
    ).join('');
    await writeFile(
      join(root, 'fleet.yaml'),
      `apiVersion: fleet/v1\ncanonicalVersion: 0.1.0\nhosts:\n${hosts}domains:\n  harness-policy: { unattended: deny }\n`,
    );
    for (const name of HOSTS) await writeFile(join(root, 'hosts', `${name}.yaml`), '{}\n');
    const git = createGit(root);
    const identity = await identityArgs(git);
    await git.run(['add', '--all']);
    await git.run([...identity, 'commit', '--quiet', '-m', 'four hosts']);
    v1 = (await git.run(['show', 'HEAD:domains/harness-policy/CLAUDE.md'])).stdout;
    await writeFile(join(root, 'domains', 'harness-policy', 'CLAUDE.md'), V2);
    await git.run(['add', '--all']);
    await git.run([...identity, 'commit', '--quiet', '-m', 'policy v2: a rewrite']);
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    runtime = domainRuntime(registry.domain(DOMAIN).descriptor, await registry.installer(DOMAIN));
  });
  after(() => rm(root, { recursive: true, force: true }));

  beforeEach(() => {
    live = new Map<string, Map<string, LiveFile> | 'unreachable'>([
      // Left on the first version everywhere: every line of it was published.
      [
        'node-01',
        new Map([
          [CLAUDE, present(v1)],
          [AGENTS, present(withBlock(v1))],
          [GEMINI, present(withBlock(v1))],
        ]),
      ],
      // Current everywhere.
      [
        'node-02',
        new Map([
          [CLAUDE, present(V2)],
          [AGENTS, present(withBlock(V2))],
          [GEMINI, present(withBlock(V2))],
        ]),
      ],
      // One local line in CLAUDE.md; no block files yet.
      [
        'node-03',
        new Map([
          [CLAUDE, present(`${V2}- only on this host\n`)],
          [AGENTS, absent],
          [GEMINI, absent],
        ]),
      ],
      ['node-04', 'unreachable'],
      // A line of CLAUDE.md deleted by hand; the GEMINI.md fleet wrote, removed.
      [
        'node-05',
        new Map([
          [CLAUDE, present(withoutALine(V2))],
          [AGENTS, present(withBlock(v1))],
          [GEMINI, removed(withBlock(V2))],
        ]),
      ],
      // AGENTS.md's block emptied by hand; CLAUDE.md fleet wrote, removed.
      [
        'node-06',
        new Map([
          [CLAUDE, removed(V2)],
          [AGENTS, present(spliceBlock('# My own notes\n', '', POLICY_MARKERS))],
          [GEMINI, present(withBlock(V2))],
        ]),
      ],
    ]);
  });

  async function assessment(): Promise<Assessment> {
    return prepareAssessment({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([[DOMAIN, runtime]]),
      domainFilter: [DOMAIN],
      readLive: (host) => {
        const files = live.get(host);
        if (files === undefined || files === 'unreachable') {
          return Promise.reject(new FleetError('HOST_UNREACHABLE', `${host}: connection refused`));
        }
        return Promise.resolve(files);
      },
    });
  }

  interface Harness {
    readonly hosts: ReconcileHost[];
    readonly requests: { host: string; request: InstallRequest }[];
    readonly records: OperatorVerb[];
  }

  /** A receipt for a request: every file written (or what `answer` makes of it). */
  function receiptFor(
    host: string,
    request: InstallRequest,
    outcome: Receipt['outcome'] = 'installed',
  ): Receipt {
    return {
      schema: 'fleet.receipt/v1',
      operationId: request.operationId,
      host,
      domain: request.domain,
      outcome,
      files: request.files.map((file) => ({
        path: file.path,
        fileId: file.fileId,
        beforeSha256: file.expectedSha256,
        afterSha256: sha256(file.content),
        backupPath: null,
        diff: '',
        state: outcome === 'rolled-back' ? ('restored' as const) : ('written' as const),
      })),
      actions: [],
      verified: outcome !== 'rolled-back',
      ...(outcome === 'rolled-back'
        ? { error: { code: 'VERIFICATION_FAILED', message: 'read back differs' } }
        : {}),
      finishedAt: '2026-05-01T10:00:00.000Z',
      audit: { seq: 1, sha256: '0'.repeat(64) },
    };
  }

  async function reconcile(
    mode: ReconcileMode,
    install?: InstallCall,
    hosts = HOSTS,
  ): Promise<Harness> {
    const requests: Harness['requests'] = [];
    const records: OperatorVerb[] = [];
    let counter = 0;
    const result = await reconcileHosts({
      assessment: await assessment(),
      runtime,
      hosts,
      mode,
      parameters: () => ({}),
      install: async (host, request) => {
        requests.push({ host, request });
        return install ? install(host, request) : receiptFor(host, request);
      },
      record: (entry) => {
        records.push(entry);
        return Promise.resolve();
      },
      newOperationId: () => `01J0000000000000000000000${(counter += 1)}`.slice(-26),
      concurrency: 2,
    });
    return { hosts: result, requests, records };
  }

  const hostOf = (run: Harness, name: string): ReconcileHost => {
    const found = run.hosts.find((h) => h.host === name);
    if (!found) throw new Error(`no ${name}`);
    return found;
  };
  const targetStates = (host: ReconcileHost): [string, string, string][] =>
    host.targets.map((t) => [t.path, t.drift, t.state]);

  it('without --confirm: classifies like drift, history-aware, and sends nothing', async () => {
    const run = await reconcile('dry-run');
    expect(run.requests).to.deep.equal([]);
    expect(run.records).to.deep.equal([]);
    expect(run.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'would-update'],
      ['node-02', 'current'],
      ['node-03', 'diverged'],
      ['node-04', 'offline_pending'],
      ['node-05', 'modified'],
      ['node-06', 'modified'],
    ]);
    // A deleted line is a hand change, not history; a file fleet wrote and someone removed is
    // deleted, not missing (the worst of a host's targets is its state: modified > deleted).
    expect(targetStates(hostOf(run, 'node-05'))).to.deep.equal([
      [CLAUDE, 'modified', 'modified'],
      [AGENTS, 'stale', 'would-update'],
      [GEMINI, 'deleted', 'deleted'],
    ]);
    expect(targetStates(hostOf(run, 'node-06'))).to.deep.equal([
      [CLAUDE, 'deleted', 'deleted'],
      [AGENTS, 'modified', 'modified'],
      [GEMINI, 'current', 'current'],
    ]);
    expect(hostOf(run, 'node-05').targets[0]?.localLines).to.equal(0);
    // A whole rewrite later, the old copy is stale (every line was published), not diverged.
    expect(targetStates(hostOf(run, 'node-01'))).to.deep.equal([
      [CLAUDE, 'stale', 'would-update'],
      [AGENTS, 'stale', 'would-update'],
      [GEMINI, 'stale', 'would-update'],
    ]);
    const diverged = hostOf(run, 'node-03');
    expect(targetStates(diverged)).to.deep.equal([
      [CLAUDE, 'diverged', 'diverged'],
      [AGENTS, 'missing', 'would-update'],
      [GEMINI, 'missing', 'would-update'],
    ]);
    expect(diverged.targets[0]?.localLines).to.equal(1);
    expect(hostOf(run, 'node-04').detail).to.include('HOST_UNREACHABLE');
    expect(reconcileExitCode(run.hosts)).to.equal(1);
  });

  it('with --confirm: one install per host of its stale and missing targets, against the sha256 it read', async () => {
    const run = await reconcile('confirm');
    expect(run.requests.map((r) => r.host)).to.have.members(['node-01', 'node-03', 'node-05']);
    const first = run.requests.find((r) => r.host === 'node-01')?.request as InstallRequest;
    expect(first.domain).to.equal(DOMAIN);
    expect(first).to.not.have.property('unattended');
    // Every write names its commit (issue 36): the request and the operator log's entry.
    const head = (await assessment()).snapshot.commit;
    expect(head).to.match(/^[0-9a-f]{40}$/);
    expect(run.requests.map((r) => r.request.repoCommit)).to.deep.equal(
      run.requests.map(() => head),
    );
    expect(run.records.map((r) => r.repoCommit)).to.deep.equal(run.records.map(() => head));
    expect(first.files.map((f) => [f.path, f.expectedSha256])).to.deep.equal([
      [CLAUDE, sha256(v1)],
      [AGENTS, sha256(withBlock(v1))],
      [GEMINI, sha256(withBlock(v1))],
    ]);
    expect(first.files[0]?.content).to.equal(V2);
    expect(first.files[1]?.content).to.equal(extractPolicySection(V2));
    // The diverged file is never part of a request; the host's healable files are.
    const third = run.requests.find((r) => r.host === 'node-03')?.request as InstallRequest;
    expect(third.files.map((f) => [f.path, f.expectedSha256])).to.deep.equal([
      [AGENTS, null],
      [GEMINI, null],
    ]);
    expect(run.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'updated'],
      ['node-02', 'current'],
      ['node-03', 'diverged'],
      ['node-04', 'offline_pending'],
      ['node-05', 'modified'],
      ['node-06', 'modified'],
    ]);
    // Never written, even with --confirm: modified, deleted (ucf: not replacing deleted config file).
    const fifth = run.requests.find((r) => r.host === 'node-05')?.request as InstallRequest;
    expect(fifth.files.map((f) => f.path)).to.deep.equal([AGENTS]);
    expect(targetStates(hostOf(run, 'node-03'))).to.deep.equal([
      [CLAUDE, 'diverged', 'diverged'],
      [AGENTS, 'missing', 'updated'],
      [GEMINI, 'missing', 'updated'],
    ]);
    // Each install is in the operator log under the operation id it was sent with.
    expect(run.records).to.have.length(3);
    for (const { host, request } of run.requests) {
      const record = run.records.find((r) => r.operationId === request.operationId);
      expect(record, host).to.include({
        verb: RECONCILE_VERB,
        host,
        domain: DOMAIN,
        outcome: 'ok',
      });
      expect(hostOf(run, host).operationId).to.equal(request.operationId);
    }
  });

  it('--unattended writes the same targets and marks each request (and log line) unattended', async () => {
    const run = await reconcile('unattended');
    expect(run.requests).to.have.length(3);
    for (const { request } of run.requests) expect(request.unattended).to.equal(true);
    for (const record of run.records) expect(record.detail).to.match(/^unattended; /);
    expect(
      run.requests.find((r) => r.host === 'node-03')?.request.files.map((f) => f.path),
    ).to.deep.equal([AGENTS, GEMINI]);
    // Unattended never writes a modified, deleted or diverged target either.
    expect(
      run.requests.flatMap((r) =>
        r.request.files.map(
          (f) => hostOf(run, r.host).targets.find((t) => t.path === f.path)?.drift,
        ),
      ),
    ).to.satisfy((drifts: string[]) => drifts.every((d) => d === 'stale' || d === 'missing'));
    expect(run.requests.find((r) => r.host === 'node-06')).to.equal(undefined);
  });

  it('an install that fails verification is an error host, and the run exits 6', async () => {
    const run = await reconcile(
      'confirm',
      (host, request) => Promise.resolve(receiptFor(host, request, 'rolled-back')),
      ['node-01'],
    );
    const host = hostOf(run, 'node-01');
    expect(host.state).to.equal('error');
    expect(host.verificationFailed).to.equal(true);
    expect(host.targets.every((t) => t.state === 'error')).to.equal(true);
    expect(run.records[0]).to.include({
      outcome: 'failed',
      exitCode: 6,
      code: 'VERIFICATION_FAILED',
    });
    expect(reconcileExitCode(run.hosts)).to.equal(6);
  });

  it('a refused install (the file changed since it was read) is an error, not a verification failure', async () => {
    const run = await reconcile(
      'confirm',
      () => Promise.reject(new FleetError('PRECONDITION_FAILED', `${CLAUDE}: live sha256 changed`)),
      ['node-01'],
    );
    const host = hostOf(run, 'node-01');
    expect(host.state).to.equal('error');
    expect(host.verificationFailed).to.equal(undefined);
    expect(host.detail).to.include('PRECONDITION_FAILED');
    expect(run.records[0]).to.include({
      outcome: 'failed',
      code: 'PRECONDITION_FAILED',
      exitCode: 3,
    });
    expect(reconcileExitCode(run.hosts)).to.equal(1);
  });

  it('a host lost during its install is offline_pending (the next run checks what happened)', async () => {
    const run = await reconcile(
      'confirm',
      () => Promise.reject(new FleetError('HOST_UNREACHABLE', 'node-01: connection reset')),
      ['node-01'],
    );
    const host = hostOf(run, 'node-01');
    expect(host.state).to.equal('offline_pending');
    expect(host.operationId).to.be.a('string');
    expect(run.records[0]).to.include({ outcome: 'unreachable' });
  });

  it('a second run after convergence sends nothing and reports current', async () => {
    live.set(
      'node-01',
      new Map([
        [CLAUDE, present(V2)],
        [AGENTS, present(withBlock(V2))],
        [GEMINI, present(withBlock(V2))],
      ]),
    );
    const run = await reconcile('confirm', undefined, ['node-01', 'node-02']);
    expect(run.requests).to.deep.equal([]);
    expect(run.hosts.map((h) => h.state)).to.deep.equal(['current', 'current']);
    expect(reconcileExitCode(run.hosts)).to.equal(0);
  });
});
