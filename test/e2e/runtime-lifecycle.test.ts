/**
 * Runtime upgrades on a node (contract §11, §12; catalogue 49–52): a real controller running from a
 * staged generation of the packed runtime, as a unit of a real `systemd --user` manager
 * (test/src/runtime-node.ts). Every acceptance failure ends in a verified rollback to the prior generation; a
 * prior that does not verify ends in manual-recovery-required with the evidence kept.
 */
import { createHash } from 'node:crypto';
import { access, chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  FLEET_PROTOCOL_VERSION,
  nodePolicyFile,
  readCurrentPointer,
  runtimeLayout,
} from '@fleet/core';
import { fakeRuntimeArtifact, type FakeArtifactOptions } from '@fleet/testkit';
import { waitFor } from '../src/fleet.js';
import {
  expectationFor,
  NODE_ID,
  runRunner,
  startRuntimeNode,
  upgradeThroughController,
  waitForEnd,
  writeRuntimeNodePolicy,
  type RuntimeNode,
} from '../src/runtime-node.js';

const FAKE_PKG = { name: '@fleet/cli', version: '0.0.0-fake' };

function fake(options: FakeArtifactOptions = {}): Buffer {
  return fakeRuntimeArtifact({ salt: `${Date.now()}-${Math.random()}`, ...options });
}

async function pointer(node: RuntimeNode): Promise<string | null> {
  const state = await readCurrentPointer(runtimeLayout(node.home, 'linux'));
  return state.state === 'set' ? state.buildId : null;
}

describe('runtime upgrade on a node: acceptance and verified rollback', function () {
  this.timeout(600_000);
  let node: RuntimeNode;

  // One node serves these cases in turn, as the kill suite's does: each ends rolled back to
  // generation A, verified — which each case checks — so the next starts where a fresh node would,
  // with the earlier cases' failed generations kept beside it (as on a real node). The crash case
  // comes last: a unit that crash-loops has spent its start limit.
  before(async function () {
    node = await startRuntimeNode(this);
  });
  after(async () => {
    await node?.dispose();
  });

  it('accepts a runtime that reports exactly what is expected, and rolls back on request', async () => {
    const bytes = fake();
    const target = expectationFor(bytes, FAKE_PKG);
    const txn = await upgradeThroughController(node, bytes, target);
    expect(await waitForPointer(node, target.build.sha256)).to.equal(true);
    // The fake runtime cannot answer status; rolling back from the node brings the real one back.
    const runner = await runRunner(node, 'rollback', 'test-rollback');
    expect(runner.code, runner.output).to.equal(0);
    const status = await waitForEnd(node, null);
    expect(status.state).to.equal('rolled-back');
    expect(status.transaction?.kind).to.equal('rollback');
    expect(status.observed.live).to.equal(node.artifact.sha256);
    expect(await pointer(node)).to.equal(node.artifact.sha256);
    const journal = await readFile(
      join(node.home, '.local/state/fleet/journal/runtime.jsonl'),
      'utf8',
    );
    expect(journal).to.contain(txn);
    expect(journal).to.match(/"step":"accepted"/);
  });

  const failures: Array<
    [string, FakeArtifactOptions, (b: Buffer) => ReturnType<typeof expectationFor>, RegExp]
  > = [
    [
      'a wrong node id',
      { lie: { nodeId: 'node-99' } },
      (b) => expectationFor(b, FAKE_PKG),
      /node-id: expected node-01, got node-99/,
    ],
    [
      'a wrong build',
      { lie: { buildSha256: 'f'.repeat(64) } },
      (b) => expectationFor(b, FAKE_PKG),
      /build-sha256: expected [0-9a-f]{64}, got f{64}/,
    ],
    [
      'an incompatible protocol',
      { lie: { protocol: FLEET_PROTOCOL_VERSION + 1 } },
      (b) => expectationFor(b, FAKE_PKG),
      new RegExp(
        `protocol: expected ${FLEET_PROTOCOL_VERSION}\\.\\.${FLEET_PROTOCOL_VERSION}, got ${FLEET_PROTOCOL_VERSION + 1}`,
      ),
    ],
    [
      'a missing catalog entry',
      {},
      (b) =>
        expectationFor(b, FAKE_PKG, {
          catalog: { domains: ['router'], probers: [], bootstrapAdapters: ['systemd-user'] },
        }),
      /catalog: .*missing domain router/,
    ],
    [
      'failing health',
      { lie: { health: 'degraded' } },
      (b) => expectationFor(b, FAKE_PKG),
      /health: expected ok, got degraded/,
    ],
    [
      'no answer within the timeout',
      { behaviour: 'hang' },
      (b) => expectationFor(b, FAKE_PKG),
      /reachable: expected a runtime answering/,
    ],
    [
      'a runtime that exits at once',
      { behaviour: 'crash' },
      (b) => expectationFor(b, FAKE_PKG),
      /failed during (restart|acceptance)/,
    ],
  ];

  for (const [what, options, expectation, evidence] of failures) {
    it(`rolls back, verified, after ${what}`, async () => {
      const bytes = fake(options);
      const target = expectation(bytes);
      const txn = await upgradeThroughController(node, bytes, target, {
        acceptanceTimeoutMs: 8_000,
      });
      const status = await waitForEnd(node, txn);
      expect(status.transaction?.outcome, JSON.stringify(status, null, 2)).to.equal('rolled-back');
      expect(status.state).to.equal('rolled-back');
      // The prior runtime answers again and passed the same acceptance.
      expect(status.observed.live).to.equal(node.artifact.sha256);
      expect(status.problems).to.deep.equal([]);
      expect(await pointer(node)).to.equal(node.artifact.sha256);
      const lines = status.transaction?.steps.map((s) => `${s.step}: ${s.detail}`).join('\n') ?? '';
      expect(lines).to.match(evidence);
      expect(lines).to.match(/rolled-back: rolled back to/);
      // The failed generation is kept for forensics.
      expect(status.generations).to.include(target.build.sha256);
      const identity = await node.client.identity();
      expect(identity.nodeId).to.equal(NODE_ID);
      expect(identity.build.sha256).to.equal(node.artifact.sha256);
    });
  }
});

describe('runtime upgrade on a node whose prior generation is damaged', function () {
  this.timeout(600_000);
  let node: RuntimeNode;

  // Each case damages its node's prior generation: a node of its own each.
  beforeEach(async function () {
    node = await startRuntimeNode(this);
  });
  afterEach(async () => {
    await node?.dispose();
  });

  it('ends in manual-recovery-required, runtime stopped and evidence kept, when the prior does not verify', async () => {
    const layout = runtimeLayout(node.home, 'linux');
    // The prior generation is tampered with while it runs (root can write 0444 files).
    const readme = join(layout.generation(node.artifact.sha256), 'package', 'README.md');
    await chmod(readme, 0o644);
    await writeFile(readme, 'tampered\n');
    const bytes = fake({ lie: { nodeId: 'node-99' } });
    const txn = await upgradeThroughController(node, bytes, expectationFor(bytes, FAKE_PKG), {
      acceptanceTimeoutMs: 5_000,
    });
    const runnerLog = join(node.home, '.local/state/fleet/journal', `runner-${txn}.log`);
    await waitForJournal(node, /"outcome":"manual-recovery-required"/);
    const journal = await readFile(
      join(node.home, '.local/state/fleet/journal/runtime.jsonl'),
      'utf8',
    );
    expect(journal).to.match(
      /NO_PRIOR_GENERATION: the prior generation [0-9a-f]{12} does not verify/,
    );
    expect(journal).to.match(/"during":"acceptance"/);
    await access(runnerLog); // the runner's log is kept
    // Stopped, not left restarting the failed runtime.
    const unit = await node.unitState(['ActiveState', 'SubState']);
    expect(unit['ActiveState'], JSON.stringify(unit)).to.equal('inactive');
    // The failed generation is still there; current was never pointed at anything unverified.
    await access(layout.generation(sha(bytes)));
  });

  it('never rolls back to a deleted prior generation', async () => {
    const layout = runtimeLayout(node.home, 'linux');
    const bytes = fake({ behaviour: 'hang' });
    await upgradeThroughController(node, bytes, expectationFor(bytes, FAKE_PKG), {
      acceptanceTimeoutMs: 8_000,
    });
    // rm -rf the prior generation after the restart, before acceptance fails.
    await waitForJournal(node, /"step":"supervisor-restarted"/);
    const prior = layout.generation(node.artifact.sha256);
    const { execFile } = await import('node:child_process');
    await new Promise((resolve) => execFile('chmod', ['-R', 'u+w', prior], resolve));
    await rm(prior, { recursive: true, force: true });
    await waitForJournal(node, /"outcome":"manual-recovery-required"/);
    const journal = await readFile(
      join(node.home, '.local/state/fleet/journal/runtime.jsonl'),
      'utf8',
    );
    expect(journal).to.match(
      /NO_PRIOR_GENERATION: the prior generation [0-9a-f]{12} does not verify \(missing\)/,
    );
    // current still names the failed generation: never a missing one.
    expect(await pointer(node)).to.equal(sha(bytes));
  });
});

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function waitForPointer(node: RuntimeNode, buildId: string): Promise<boolean> {
  await waitFor(
    async () => {
      const journal = await readFile(
        join(node.home, '.local/state/fleet/journal/runtime.jsonl'),
        'utf8',
      ).catch(() => '');
      return journal.includes('"outcome":"accepted"');
    },
    120_000,
    `the upgrade to ${buildId.slice(0, 12)} to be accepted`,
  );
  const state = await readCurrentPointer(runtimeLayout(node.home, 'linux'));
  return state.state === 'set' && state.buildId === buildId;
}

async function waitForJournal(node: RuntimeNode, pattern: RegExp): Promise<void> {
  await waitFor(
    async () =>
      pattern.test(
        await readFile(join(node.home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8').catch(
          () => '',
        ),
      ),
    180_000,
    `the journal to match ${pattern}`,
  );
}

describe('runtime stage refusals: nothing staged, nothing journaled', function () {
  this.timeout(300_000);
  let node: RuntimeNode;

  before(async function () {
    node = await startRuntimeNode(this, { allowBootstrap: false });
  });
  after(async () => {
    await node?.dispose();
  });

  async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
    try {
      await promise;
    } catch (error) {
      return error as { code: string; message: string };
    }
    throw new Error('expected a refusal');
  }

  const journal = () =>
    readFile(join(node.home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8').catch(() => '');

  function request(bytes: Buffer, overrides: Record<string, unknown> = {}) {
    return {
      kind: 'upgrade' as const,
      supervisor: 'systemd-user',
      planId: null,
      target: expectationFor(bytes, FAKE_PKG),
      artifact: { sha256: sha(bytes), bytes: bytes.length, content: bytes.toString('base64') },
      ...overrides,
    };
  }

  it('a bootstrap the node has no policy for: BOOTSTRAP_REFUSED (exit 7)', async () => {
    const bytes = fake();
    const refused = await refusal(node.client.runtimeStage(request(bytes, { kind: 'bootstrap' })));
    expect(refused.code).to.equal('BOOTSTRAP_REFUSED');
    expect((refused as unknown as { exitCode: number }).exitCode).to.equal(7);
    expect(await journal()).to.equal('');
  });

  it('an upgrade too: every runtime change needs bootstrap.allow (issue 36)', async () => {
    const refused = await refusal(node.client.runtimeStage(request(fake())));
    expect(refused.code).to.equal('BOOTSTRAP_REFUSED');
    expect(refused.message).to.contain('denies runtime changes');
    expect(await journal()).to.equal('');
    // The refusals below are past the policy: from here on the node allows runtime changes.
    await writeRuntimeNodePolicy(node.home, { unit: node.unit, replace: true });
    node.manager.chown(nodePolicyFile(node.home));
  });

  it('an artifact whose bytes changed in transfer: GENERATION_INVALID', async () => {
    const bytes = fake();
    const other = fake();
    const refused = await refusal(
      node.client.runtimeStage(
        request(bytes, {
          artifact: { sha256: sha(bytes), bytes: other.length, content: other.toString('base64') },
        }),
      ),
    );
    expect(refused.code).to.equal('GENERATION_INVALID');
    expect(refused.message).to.match(/after transfer/);
    expect(await journal()).to.equal('');
  });

  it('a target for another node: NODE_ID_MISMATCH', async () => {
    const bytes = fake();
    const refused = await refusal(
      node.client.runtimeStage(
        request(bytes, { target: { ...expectationFor(bytes, FAKE_PKG), nodeId: 'node-02' } }),
      ),
    );
    expect(refused.code).to.equal('NODE_ID_MISMATCH');
    expect(await journal()).to.equal('');
  });

  it('an upgrade token cannot bootstrap, and nothing can roll back what was never accepted', async () => {
    const { createControllerClient } = await import('@fleet/core');
    const token = await node.issueToken('upgrader', ['runtime:upgrade']);
    const upgrader = createControllerClient({
      host: NODE_ID,
      url: `http://127.0.0.1:${node.port}`,
      token,
    });
    const bytes = fake();
    const denied = await refusal(upgrader.runtimeStage(request(bytes, { kind: 'bootstrap' })));
    expect(denied.code).to.equal('SCOPE_DENIED');
    expect((await refusal(upgrader.runtimeRollback({}))).code).to.equal('SCOPE_DENIED');
    expect((await refusal(node.client.runtimeRollback({}))).code).to.equal('NO_PRIOR_GENERATION');
    expect(await journal()).to.equal('');
  });
});
