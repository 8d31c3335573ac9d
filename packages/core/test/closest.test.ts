/** "Did you mean": the closest name to a typo, or none (contract §7). */
import { expect } from 'chai';
import { closestName, editDistance } from '../src/index.js';

describe('closestName', () => {
  const hosts = ['node-01', 'node-02', 'node-10', 'router-a'];
  const rows: [string, readonly string[], string | undefined][] = [
    ['node-1', hosts, 'node-01'],
    ['nod-02', hosts, 'node-02'],
    ['ndoe-10', hosts, 'node-10'], // a swap of neighbours is one edit
    ['NODE-01', hosts, 'node-01'],
    ['router', hosts, 'router-a'],
    ['web', hosts, undefined],
    ['node-99', hosts, 'node-01'], // equally close: the first in order
    ['', hosts, undefined],
    ['statsu', ['status', 'drift', 'version'], 'status'],
    ['x', [], undefined],
    ['alfa', ['alpha', 'beta'], 'alpha'], // two edits in five letters: a typo still
    ['betta', ['alpha', 'beta'], 'beta'],
    ['dev', ['alpha', 'beta'], undefined], // three edits from beta: another name
  ];
  for (const [name, candidates, want] of rows) {
    it(`${JSON.stringify(name)} → ${want ?? 'none'}`, () => {
      expect(closestName(name, candidates)).to.equal(want);
    });
  }

  it('counts edits', () => {
    expect([
      editDistance('', 'abc'),
      editDistance('abc', 'abc'),
      editDistance('ab', 'ba'),
      editDistance('kitten', 'sitting'),
    ]).to.deep.equal([3, 0, 1, 3]);
  });
});
