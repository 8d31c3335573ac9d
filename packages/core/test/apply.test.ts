/**
 * `fleet apply`'s pure half (contract §7): what each drift state allows, which exit code wins
 * across hosts, and what a saved plan checks against the same plan derived again.
 */
import { expect } from 'chai';
import {
  applyDecision,
  desiredSha256,
  hostExitCode,
  parseApplyPlan,
  planMoves,
  type ApplyFile,
  type ApplyHostPlan,
} from '../src/config/apply.js';
import { isFleetError, mostUrgentExit } from '../src/errors.js';
import type { DriftState } from '../src/interfaces/drift.js';

describe('apply: the decision per drift state', () => {
  const cases: [DriftState, boolean, string][] = [
    ['current', false, 'current'],
    ['stale', false, 'install'],
    ['missing', false, 'install'],
    ['diverged', false, 'refused'],
    ['modified', false, 'refused'],
    ['deleted', false, 'refused'],
    ['diverged', true, 'install'],
    ['modified', true, 'install'],
    ['deleted', true, 'install'],
    ['error', false, 'blocked'],
    ['error', true, 'blocked'],
    ['unsupported', true, 'blocked'],
  ];
  for (const [state, force, decision] of cases) {
    it(`${state}${force ? ' with --force' : ''} → ${decision}`, () => {
      expect(applyDecision(state, force)).to.equal(decision);
    });
  }
});

describe('apply: desiredSha256 names the bytes an install writes (issue 38)', () => {
  // Expected values are `sha256sum` of the file as it lands on disk (printf '…' | sha256sum).
  const cases: { name: string; desired: string; encoding?: 'base64'; sha256: string }[] = [
    {
      name: 'a text source: its UTF-8 bytes',
      desired: 'cafe\n',
      sha256: 'f6c83e3641a08ec21aebc01296ff12f5a46780f0fbadb1c8101309123b95d2c6',
    },
    {
      name: 'a Latin-1 source carried as base64: the bytes written, caf\\xe9\\n',
      desired: 'Y2Fm6Qo=',
      encoding: 'base64',
      sha256: '9e4efed0ff1dbcf37240f82e1aad6c763eb9331434d2b394a6441abbbe3634eb',
    },
    {
      name: 'an empty byte source: the empty file',
      desired: '',
      encoding: 'base64',
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    },
  ];
  for (const { name, desired, encoding, sha256 } of cases) {
    it(name, () => {
      expect(desiredSha256(desired, encoding)).to.equal(sha256);
    });
  }
  it('never the base64 text itself', () => {
    expect(desiredSha256('Y2Fm6Qo=', 'base64')).to.not.equal(desiredSha256('Y2Fm6Qo='));
  });
});

describe('apply: the most urgent exit code across hosts', () => {
  const cases: [number[], number][] = [
    [[], 0],
    [[0, 0], 0],
    [[0, 7], 7],
    [[1, 5], 5],
    [[5, 4, 0], 4],
    [[7, 6], 6],
    [[3, 7], 3],
    [[2, 1], 2],
  ];
  for (const [codes, expected] of cases) {
    it(`[${codes.join(', ')}] → ${expected}`, () => {
      expect(mostUrgentExit(codes)).to.equal(expected);
    });
  }
  it('a host with a refused file exits 7 even when the rest installed', () => {
    const file: ApplyFile = {
      fileId: 'a',
      path: '~/a',
      state: 'diverged',
      decision: 'refused',
      liveSha256: null,
      desiredSha256: null,
    };
    expect(hostExitCode([{ domain: 'd', files: [file], actions: [] }])).to.equal(7);
    expect(
      hostExitCode([{ domain: 'd', files: [{ ...file, decision: 'current' }], actions: [] }]),
    ).to.equal(0);
  });
});

describe('apply: a saved plan against the plan derived again', () => {
  const sha = (c: string) => c.repeat(64);
  const host = (files: Partial<ApplyFile>[]): ApplyHostPlan => ({
    host: 'node-01',
    status: 'planned',
    domains: [
      {
        domain: 'router',
        actions: [],
        files: files.map((f, i) => ({
          fileId: `f${i}`,
          path: `~/f${i}`,
          state: 'stale',
          decision: 'install',
          liveSha256: sha('a'),
          desiredSha256: sha('b'),
          ...f,
        })),
      },
    ],
  });

  it('holds when every live sha256 and desired content is the same', () => {
    expect(planMoves(host([{}, {}]), host([{}, {}]))).to.deep.equal([]);
  });
  it('names a file whose live sha256 moved (also from no file to a file)', () => {
    const moves = planMoves(host([{}, { liveSha256: null }]), host([{ liveSha256: sha('c') }, {}]));
    expect(moves.map((m) => m.file)).to.deep.equal(['node-01:~/f0', 'node-01:~/f1']);
    expect(moves[0]?.message).to.include('the live file moved');
  });
  it('names a file whose content to install differs, and a file not in the plan', () => {
    const moves = planMoves(host([{}]), host([{ desiredSha256: sha('d') }, {}]));
    expect(moves.map((m) => m.message)).to.deep.equal([
      'the content to install differs from the planned one',
      'a file not in the plan',
    ]);
  });
  it('a domain no longer planned is a move', () => {
    expect(planMoves(host([{}]), { ...host([]), domains: [] })).to.have.length(1);
  });
});

describe('apply: parsing a saved plan', () => {
  const usage = (text: string) => {
    try {
      parseApplyPlan(text, 'plan.json');
    } catch (error) {
      if (isFleetError(error)) return `${error.code}: ${error.message}`;
      throw error;
    }
    return 'parsed';
  };
  it('refuses what is not JSON, another document, or an unknown field, as USAGE', () => {
    expect(usage('{')).to.match(/^USAGE: plan\.json is not a saved apply plan/);
    expect(usage('{"schema":"fleet.plan/v1"}')).to.match(/^USAGE: .*fleet\.apply-plan\/v1/);
    const good = {
      schema: 'fleet.apply-plan/v1',
      createdAt: '2026-12-01T00:00:00.000Z',
      repoCommit: 'a'.repeat(40),
      force: false,
      hosts: [],
    };
    expect(usage(JSON.stringify(good))).to.equal('parsed');
    expect(usage(JSON.stringify({ ...good, extra: 1 }))).to.match(/^USAGE/);
  });
});
