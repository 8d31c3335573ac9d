/** One line per journal record, as `fleet bootstrap status` and apply's progress show it. */
import { expect } from 'chai';
import type { JournalRecord } from '../src/generations/journal.js';
import { describeRecord } from '../src/lifecycle/journal-history.js';

describe('describeRecord', () => {
  it('names an end by its outcome only: the step name goes in front ("end: accepted", once)', () => {
    const end: JournalRecord = {
      v: 1,
      seq: 7,
      at: '2026-05-01T00:00:00.000Z',
      txn: '01J0000000000000000000000A',
      step: 'end',
      data: { outcome: 'accepted' },
      sum: '0'.repeat(64),
    };
    expect(`${end.step}: ${describeRecord(end)}`).to.equal('end: accepted');
  });
});
