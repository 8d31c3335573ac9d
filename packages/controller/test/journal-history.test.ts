/** One line per journal record, as `fleet bootstrap status` and apply's progress show it. */
import { expect } from 'chai';
import type { JournalRecord } from '../src/generations/journal-record.js';
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

  // Issue 35 item 3: no word said twice in a status line or the operator's error.
  const record = (step: JournalRecord['step'], data: unknown): JournalRecord =>
    ({
      v: 1,
      seq: 8,
      at: '2026-05-01T00:00:00.000Z',
      txn: '01J0000000000000000000000A',
      step,
      data,
      sum: '0'.repeat(64),
    }) as JournalRecord;
  const cases: Array<[string, JournalRecord, string]> = [
    [
      'manual recovery: its reason alone (the step name and the verdict say the rest)',
      record('manual-recovery-required', {
        reason: 'NO_PRIOR_GENERATION: there is no prior generation to roll back to',
      }),
      'NO_PRIOR_GENERATION: there is no prior generation to roll back to',
    ],
    [
      'an acceptance failure whose message lists its criteria: not listed again',
      record('failed', {
        during: 'acceptance',
        code: 'ACCEPTANCE_FAILED',
        message:
          'the new runtime was not accepted: reachable: no answer; controller log (x): a | b',
        criteria: ['reachable: no answer'],
      }),
      'failed during acceptance: ACCEPTANCE_FAILED: the new runtime was not accepted: reachable: no answer; controller log (x): a | b',
    ],
    [
      'criteria the message does not say: listed',
      record('failed', {
        during: 'restart',
        code: 'ACTION_FAILED',
        message: 'restart failed',
        criteria: ['health: degraded'],
      }),
      'failed during restart: ACTION_FAILED: restart failed [health: degraded]',
    ],
  ];
  for (const [what, input, line] of cases) {
    it(what, () => expect(describeRecord(input)).to.equal(line));
  }
});
