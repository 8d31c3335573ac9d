/**
 * runtimeDisagreements (core runtime/supervisor-probe.ts): the checks every supervisor adapter's
 * prober shares — the `current` pointer set, the supervised controller on that generation and on
 * the desired `--node-id` — as a table of cases.
 */
import { expect } from 'chai';
import { runtimeDisagreements, shortBuildId } from '../src/runtime/supervisor-probe.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

const CASES = [
  {
    name: 'all agree',
    facts: { current: A, currentState: 'set', generation: A, nodeIdFlag: 'node-01' },
    expected: [],
  },
  {
    name: 'another generation runs',
    facts: { current: A, currentState: 'set', generation: B, nodeIdFlag: 'node-01' },
    expected: ['it runs generation bbbbbbbbbbbb, current is aaaaaaaaaaaa'],
  },
  {
    name: 'no pointer: the generation is not compared, the node id still is',
    facts: { current: null, currentState: 'unset', generation: B, nodeIdFlag: null },
    expected: [
      'the current generation pointer is unset',
      'it runs with --node-id (none), expected node-01',
    ],
  },
  {
    name: 'a damaged pointer says why',
    facts: {
      current: null,
      currentState: 'invalid: not a build id',
      generation: A,
      nodeIdFlag: 'node-01',
    },
    expected: ['the current generation pointer is invalid: not a build id'],
  },
  {
    name: 'another node id',
    facts: { current: A, currentState: 'set', generation: A, nodeIdFlag: 'node-02' },
    expected: ['it runs with --node-id node-02, expected node-01'],
  },
];

describe('runtimeDisagreements', () => {
  for (const testCase of CASES) {
    it(testCase.name, () => {
      expect(runtimeDisagreements(testCase.facts, 'node-01')).to.deep.equal(testCase.expected);
    });
  }

  it('shows a build id by its first 12 characters, and none as (none)', () => {
    expect([shortBuildId(A), shortBuildId(null)]).to.deep.equal(['aaaaaaaaaaaa', '(none)']);
  });
});
