/** The human reconcile output's wording (issue 17: "diverged     diverged"). */
import { expect } from 'chai';
import { targetState } from '../src/reconcile/render.js';

describe('harness reconcile: a target state, said once', () => {
  const cases: [state: string, drift: string, shown: string][] = [
    ['diverged', 'diverged', 'diverged'],
    ['modified', 'modified', 'modified'],
    ['would-update', 'stale', 'would-update (stale)'],
    ['updated', 'missing', 'updated (missing)'],
    ['error', 'unsupported', 'error (unsupported)'],
  ];
  for (const [state, drift, shown] of cases) {
    it(`${state} / ${drift} → ${shown}`, () => {
      expect(targetState({ state, drift })).to.equal(shown);
    });
  }
});
