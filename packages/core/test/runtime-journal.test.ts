/**
 * Issue 36 item 4: a runtime that failed acceptance — or whose transaction is open — is never
 * `current` in `fleet version` or `fleet drift`, whatever version it reports. Pure: the journal
 * summary (`GET /v1/summary`'s `runtime`) read into the reason, and the runtime item with it.
 */
import { expect } from 'chai';
import {
  runtimeJournalProblem,
  withJournal,
  type RuntimeSummary,
  type VersionItem,
} from '../src/index.js';

type Outcome = NonNullable<RuntimeSummary['transaction']>['outcome'];
const txn = (lastStep: string, outcome: Outcome = null) => ({
  id: 'T1',
  kind: 'upgrade' as const,
  lastStep,
  at: '2026-12-05T11:00:00.000Z',
  outcome,
});

describe('drift / version: the runtime journal (issue 36 item 4)', () => {
  const cases: { name: string; runtime: RuntimeSummary | null; problem: RegExp | null }[] = [
    { name: 'no summary read: no word', runtime: null, problem: null },
    {
      name: 'empty journal: nothing',
      runtime: { journal: 'empty', busy: false, attention: 'none', transaction: null },
      problem: null,
    },
    {
      name: 'the last transaction ended accepted: nothing',
      runtime: {
        journal: 'ok',
        busy: false,
        attention: 'none',
        transaction: txn('end', 'accepted'),
      },
      problem: null,
    },
    {
      name: 'the runner killed at failed: not accepted, recovery required',
      runtime: {
        journal: 'ok',
        busy: false,
        attention: 'recovery-required',
        transaction: txn('failed'),
      },
      problem:
        /transaction T1 \(upgrade\) failed and was interrupted before its rollback: not accepted, recovery required \(fleet bootstrap status node-01\)/,
    },
    {
      name: 'the runner killed at accepted: interrupted, recovery required',
      runtime: {
        journal: 'ok',
        busy: false,
        attention: 'recovery-required',
        transaction: txn('accepted'),
      },
      problem: /interrupted at "accepted": not accepted, recovery required/,
    },
    {
      name: 'a runner at work: in progress, not accepted yet',
      runtime: {
        journal: 'ok',
        busy: true,
        attention: 'in-progress',
        transaction: txn('supervisor-restarted'),
      },
      problem: /in progress at "supervisor-restarted": not accepted yet/,
    },
    {
      name: 'manual recovery',
      runtime: {
        journal: 'ok',
        busy: false,
        attention: 'recovery-required',
        transaction: txn('end', 'manual-recovery-required'),
      },
      problem: /ended in manual recovery/,
    },
    {
      name: 'a corrupt journal',
      runtime: {
        journal: 'corrupt',
        busy: false,
        attention: 'recovery-required',
        transaction: null,
      },
      problem: /journal is corrupt: recovery required/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const problem = runtimeJournalProblem('node-01', c.runtime);
      if (c.problem === null) expect(problem).to.equal(null);
      else expect(problem).to.match(c.problem);
    });
  }

  it('a current runtime item with a problem is stale, the reason first; others keep their state', () => {
    const item: VersionItem = {
      layer: 'version',
      kind: 'runtime',
      name: '@fleet/cli',
      version: '1.1.0',
      expected: '1.1.0',
      state: 'current',
      detail: 'build abc',
    };
    expect(withJournal(item, null)).to.equal(item);
    expect(withJournal(item, 'P')).to.deep.include({ state: 'stale', detail: 'P; build abc' });
    expect(withJournal({ ...item, state: 'diverged' }, 'P')).to.deep.include({
      state: 'diverged',
      detail: 'P; build abc',
    });
  });
});
