/**
 * compareCodeUnits (src/compare.ts): names, identifiers and paths in code-unit order, the same on
 * every node whatever its locale — not `localeCompare`, whose order follows the locale and whose
 * first call loads ICU's collation data into the controller (contract §14).
 */
import { expect } from 'chai';
import { compareCodeUnits } from '../src/compare.js';

describe('compareCodeUnits', () => {
  const cases: [a: string, b: string, expected: -1 | 0 | 1][] = [
    ['alpha', 'beta', -1],
    ['beta', 'alpha', 1],
    ['same', 'same', 0],
    ['', 'a', -1],
    ['node-01', 'node-1', -1],
    ['node-9', 'node-10', 1], // code units, not numbers
    ['Zeta', 'alpha', -1], // upper case before lower case
    ['API_KEY', 'APIKEY', 1], // '_' after the capitals
    ['a_1', 'a1', 1], // '_' after the digits
    ['~/.config/a', '~/.config/b', -1],
    ['é', 'z', 1], // beyond ASCII: by code unit too
  ];
  for (const [a, b, expected] of cases) {
    it(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: ${expected}`, () => {
      expect(compareCodeUnits(a, b)).to.equal(expected);
    });
  }

  it('sorts as Array.prototype.sort does without a comparator', () => {
    const names = ['node-10', 'Node-2', 'node-2', 'a_b', 'ab', 'a-b', 'é', '', 'z'];
    expect([...names].sort(compareCodeUnits)).to.deep.equal([...names].sort());
  });
});
