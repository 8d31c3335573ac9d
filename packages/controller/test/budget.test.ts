/** The connection budgets as data (http/budget.ts; catalogue 10): who gets in, who makes room. */
import { expect } from 'chai';
import { ConnectionBudget } from '../src/http/budget.js';

const limits = { authenticated: 2, unauthenticated: 4, perAddress: 2 };

describe('ConnectionBudget', () => {
  it('admits up to the unauthenticated budget, then closes the heaviest address’s oldest idle one', () => {
    const budget = new ConnectionBudget<string>(limits);
    for (const c of ['a1', 'a2', 'a3', 'a4']) expect(budget.open(c, 'A').admitted).to.equal(true);
    expect(budget.open('b1', 'B')).to.deep.equal({ admitted: true, evict: 'a1' });
    expect(budget.open('a5', 'A')).to.deep.equal({ admitted: true, evict: 'a2' });
    expect(budget.counts()).to.deep.equal({ authenticated: 0, unauthenticated: 4 });
  });

  it('refuses when no address is over its share (nobody is flooding)', () => {
    const budget = new ConnectionBudget<string>(limits);
    for (const [c, a] of [
      ['a1', 'A'],
      ['a2', 'A'],
      ['b1', 'B'],
      ['b2', 'B'],
    ] as const)
      budget.open(c, a);
    expect(budget.open('c1', 'C')).to.deep.equal({ admitted: false });
  });

  it('never closes a connection with a request in progress', () => {
    const budget = new ConnectionBudget<string>(limits);
    for (const c of ['a1', 'a2', 'a3', 'a4']) budget.open(c, 'A');
    for (const c of ['a1', 'a2', 'a3', 'a4']) budget.busy(c, true);
    expect(budget.open('b1', 'B')).to.deep.equal({ admitted: false });
    budget.busy('a3', false);
    expect(budget.open('b1', 'B')).to.deep.equal({ admitted: true, evict: 'a3' });
  });

  it('moves an authenticated connection out of the unauthenticated budget, into its own', () => {
    const budget = new ConnectionBudget<string>(limits);
    for (const c of ['a1', 'a2', 'a3']) budget.open(c, 'A');
    expect(budget.authenticate('a1')).to.equal(true);
    expect(budget.authenticate('a2')).to.equal(true);
    expect(budget.authenticate('a3')).to.equal(false); // the authenticated budget is full
    expect(budget.counts()).to.deep.equal({ authenticated: 2, unauthenticated: 1 });
    // Unauthenticated ones can fill their own budget without touching the authenticated two.
    for (const c of ['x1', 'x2', 'x3']) expect(budget.open(c, 'X').admitted).to.equal(true);
    expect(budget.open('x4', 'X')).to.deep.equal({ admitted: true, evict: 'x1' });
    budget.close('a1');
    expect(budget.authenticate('a3')).to.equal(true);
  });
});
