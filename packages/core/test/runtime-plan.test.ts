import { FLEET_PROTOCOL_VERSION } from '../src/wire/protocol.js';
import { expect } from 'chai';
import { isFleetError } from '../src/errors.js';
import {
  BOOTSTRAP_PLAN_SCHEMA,
  canonicalJson,
  planDifferences,
  planId,
  readPlan,
  sealPlan,
  targetExpectation,
  transactionVerdict,
  type BootstrapPlanBody,
} from '../src/runtime/plan.js';
import type { HostEntry } from '../src/repo/schema.js';
import type { RuntimeStatusResponse } from '../src/wire/runtime.js';

const SHA = 'a'.repeat(64);
const PRIOR = 'b'.repeat(64);

const host: HostEntry = {
  controller: 'http://127.0.0.1:7701',
  platform: 'linux',
  supervisor: 'systemd-user',
  upgrade: { strategy: 'tarball' },
  domains: ['router', 'harness-policy'],
};

const artifact = {
  file: 'artifacts/fleet-1.2.0.tgz',
  sha256: SHA,
  bytes: 1234,
  package: '@fleet/cli',
  version: '1.2.0',
  commit: '9c1e0aa',
};

function body(overrides: Partial<BootstrapPlanBody> = {}): BootstrapPlanBody {
  return {
    schema: BOOTSTRAP_PLAN_SCHEMA,
    host: 'alpha',
    nodeId: 'alpha',
    platform: 'linux',
    supervisor: 'systemd-user',
    route: 'controller',
    artifact,
    prior: { build: PRIOR, observedThrough: 'controller' },
    repoCommit: 'c0ffee0',
    protocol: FLEET_PROTOCOL_VERSION,
    target: targetExpectation({ nodeId: 'alpha', host, artifact }),
    ...overrides,
  };
}

function failure(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    if (isFleetError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a fleet error');
}

describe('runtime plan (pure)', () => {
  it('the expectation binds node id, package, version, build, protocol and the host catalog', () => {
    expect(targetExpectation({ nodeId: 'alpha', host, artifact })).to.deep.equal({
      nodeId: 'alpha',
      package: '@fleet/cli',
      version: '1.2.0',
      build: { sha256: SHA, commit: '9c1e0aa' },
      protocol: { min: FLEET_PROTOCOL_VERSION, max: FLEET_PROTOCOL_VERSION },
      catalog: {
        domains: ['harness-policy', 'router'],
        probers: [],
        bootstrapAdapters: ['systemd-user'],
      },
    });
  });

  it('canonical JSON sorts keys at every level, so the id does not depend on key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).to.equal(
      '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}',
    );
    const plan = body();
    const reordered = Object.fromEntries(Object.entries(plan).reverse()) as BootstrapPlanBody;
    expect(planId(reordered)).to.equal(planId(plan));
  });

  it('a sealed plan reads back; any edit is refused with PLAN_MISMATCH (exit 3)', () => {
    const sealed = sealPlan(body());
    expect(readPlan(JSON.parse(JSON.stringify(sealed)), 'p.json')).to.deep.equal(sealed);
    const edits: Array<(plan: Record<string, unknown>) => void> = [
      (plan) => (plan['nodeId'] = 'beta'),
      (plan) => ((plan['artifact'] as Record<string, unknown>)['sha256'] = 'c'.repeat(64)),
      (plan) => ((plan['prior'] as Record<string, unknown>)['build'] = null),
      (plan) => (plan['route'] = 'ssh'),
    ];
    for (const edit of edits) {
      const edited = JSON.parse(JSON.stringify(sealed)) as Record<string, unknown>;
      edit(edited);
      const refused = failure(() => readPlan(edited, 'p.json'));
      expect(refused.code).to.equal('PLAN_MISMATCH');
      expect(refused.message).to.match(/edited after it was planned/);
    }
  });

  it('a file that is not a plan is a usage error naming the field', () => {
    const refused = failure(() => readPlan({ ...sealPlan(body()), extra: 1 }, 'p.json'));
    expect(refused.code).to.equal('USAGE');
    expect(failure(() => readPlan('nope', 'p.json')).code).to.equal('USAGE');
  });

  it('names the fields in which two plans differ', () => {
    expect(
      planDifferences(
        body(),
        body({ prior: { build: null, observedThrough: 'ssh' }, route: 'ssh' }),
      ),
    ).to.deep.equal(['prior', 'route']);
    expect(planDifferences(body(), body())).to.deep.equal([]);
  });
});

describe('transaction verdicts (pure)', () => {
  const status = (
    transaction: Partial<NonNullable<RuntimeStatusResponse['transaction']>> | null,
    busy: number | null = null,
  ): RuntimeStatusResponse => ({
    state: 'idle',
    journal: 'ok',
    transaction:
      transaction === null
        ? null
        : {
            id: 'T1',
            kind: 'upgrade',
            target: SHA,
            prior: PRIOR,
            lastStep: 'end',
            outcome: 'accepted',
            planId: null,
            steps: [],
            ...transaction,
          },
    observed: { pointer: SHA, supervisor: SHA, live: SHA, supervisorState: 'active' },
    next: 'none',
    problems: [],
    code: null,
    generations: [SHA, PRIOR],
    busy,
    observedAt: '2026-11-29T00:00:00.000Z',
  });

  const cases: Array<[string, RuntimeStatusResponse, string | null, string, string | null]> = [
    ['accepted', status({}), 'T1', 'accepted', null],
    ['rolled back', status({ outcome: 'rolled-back' }), 'T1', 'rolled-back', 'ROLLED_BACK'],
    [
      'manual recovery',
      status({ outcome: 'manual-recovery-required' }),
      'T1',
      'manual-recovery-required',
      'RECOVERY_REQUIRED',
    ],
    [
      'failed before activation',
      status({ outcome: 'failed' }),
      'T1',
      'failed',
      'RUNTIME_NOT_ACTIVATED',
    ],
    ['the newest, for a rollback', status({ kind: 'rollback' }), null, 'accepted', null],
  ];
  for (const [what, answer, id, outcome, code] of cases) {
    it(`${what}: ${outcome}${code ? ` (${code})` : ''}`, () => {
      const verdict = transactionVerdict(answer, id);
      expect(verdict.done).to.equal(true);
      if (!verdict.done) return;
      expect(verdict.outcome).to.equal(outcome);
      expect(verdict.error?.code ?? null).to.equal(code);
    });
  }

  // Issue 35 item 3: the message says why first, and says "manual recovery required" once —
  // whether the node's detail carries the words (an older node) or not.
  const step = (seq: number, name: string, detail: string) => ({
    seq,
    at: '2026-11-29T00:00:00.000Z',
    step: name,
    detail,
  });
  const manualCases: Array<[string, string, string]> = [
    [
      'an older node, whose detail repeats the words',
      'manual recovery required: NO_PRIOR_GENERATION: there is no prior generation to roll back to',
      'failed during acceptance: ACCEPTANCE_FAILED: the new runtime was not accepted: reachable; controller log (journalctl): Error: listen EADDRINUSE; manual recovery required: NO_PRIOR_GENERATION: there is no prior generation to roll back to',
    ],
    [
      'a node that journals the reason alone',
      'NO_PRIOR_GENERATION: there is no prior generation to roll back to',
      'failed during acceptance: ACCEPTANCE_FAILED: the new runtime was not accepted: reachable; controller log (journalctl): Error: listen EADDRINUSE; manual recovery required: NO_PRIOR_GENERATION: there is no prior generation to roll back to',
    ],
  ];
  for (const [what, detail, message] of manualCases) {
    it(`manual recovery, ${what}: the reason once, after the failure`, () => {
      const verdict = transactionVerdict(
        status({
          outcome: 'manual-recovery-required',
          steps: [
            step(
              1,
              'failed',
              'failed during acceptance: ACCEPTANCE_FAILED: the new runtime was not accepted: reachable; controller log (journalctl): Error: listen EADDRINUSE',
            ),
            step(2, 'manual-recovery-required', detail),
            step(3, 'end', 'manual-recovery-required'),
          ],
        }),
        'T1',
      );
      expect(verdict.done && verdict.error?.message).to.equal(message);
      expect(message.match(/manual recovery required/g)).to.have.length(1);
    });
  }

  it('is not done while open, while a runner works, or for another transaction', () => {
    expect(
      transactionVerdict(status({ lastStep: 'activated', outcome: null }), 'T1').done,
    ).to.equal(false);
    expect(transactionVerdict(status({}, 4242), 'T1').done).to.equal(false);
    expect(transactionVerdict(status({}), 'T2').done).to.equal(false);
    expect(transactionVerdict(status(null), null).done).to.equal(false);
  });
});
