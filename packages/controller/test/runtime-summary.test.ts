/**
 * The runtime journal in one line for `fleet status` (contract §7): in progress, needing recovery,
 * or nothing to look at — one row per situation, from the journal and the lock alone.
 */
import { expect } from 'chai';
import type { RuntimeSummary } from '@fleet/core';
import { parseJournal } from '../src/generations/journal.js';
import { summarizeRuntime } from '../src/lifecycle/summary.js';
import { BUILD_A, BUILD_B, JournalText } from './support/runtime.js';

const upgrade = (until: Parameters<typeof JournalText.upgrade>[2]) =>
  JournalText.upgrade(BUILD_B, BUILD_A, until);

describe('summarizeRuntime', () => {
  const rows: [string, string, boolean, Partial<RuntimeSummary>, string | null][] = [
    ['an empty journal', '', false, { journal: 'empty', attention: 'none' }, null],
    ['an accepted upgrade', upgrade('end').text(), false, { attention: 'none' }, 'accepted'],
    [
      'staged, awaiting activation',
      upgrade('staged').text(),
      false,
      { attention: 'in-progress' },
      null,
    ],
    [
      'activated, the runner working',
      upgrade('activated').text(),
      true,
      { attention: 'in-progress', busy: true },
      null,
    ],
    [
      'activated, nobody working on it',
      upgrade('supervisor-restarted').text(),
      false,
      { attention: 'recovery-required' },
      null,
    ],
    [
      'ended in manual recovery',
      upgrade('supervisor-restarted')
        .add('failed', {
          during: 'acceptance',
          code: 'ACCEPTANCE_FAILED',
          message: 'x',
          criteria: [],
        })
        .add('manual-recovery-required', { reason: 'no valid prior generation' })
        .add('end', { outcome: 'manual-recovery-required' })
        .text(),
      false,
      { attention: 'recovery-required' },
      'manual-recovery-required',
    ],
    [
      'a corrupt journal',
      upgrade('end').text().replace('"reused":false', '"reused":true'),
      false,
      { journal: 'corrupt', attention: 'recovery-required', transaction: null },
      null,
    ],
    [
      'a torn last record',
      `${upgrade('end').text()}{"v":1,"seq":7`,
      false,
      { journal: 'torn-tail', attention: 'none' },
      'accepted',
    ],
  ];
  for (const [name, text, busy, want, outcome] of rows) {
    it(`${name}: ${want.attention}`, () => {
      const got = summarizeRuntime(parseJournal(text), busy);
      expect(got).to.include(want);
      if (got.transaction !== null) {
        expect(got.transaction.kind).to.equal('upgrade');
        expect(got.transaction.outcome).to.equal(outcome);
      }
    });
  }
});
