/** Audit retention decided as data (audit/rotation.ts; docs/audit-log.md "Retention"): tables. */
import { expect } from 'chai';
import { AUDIT_GENESIS } from '@fleet/core';
import { planRotation, type ClosedSegment } from '../src/audit/rotation.js';

/** Closed segments of 10 records each from seq 1; `writes` says which hold a write's record. */
function closed(writes: readonly boolean[]): ClosedSegment[] {
  return writes.map((holdsWrites, i) => ({
    name: `audit.${String(i * 10 + 1).padStart(12, '0')}.jsonl`,
    firstSeq: i * 10 + 1,
    firstPrev: AUDIT_GENESIS,
    holdsWrites,
  }));
}

describe('audit retention plan', () => {
  const cases: {
    name: string;
    writes: boolean[];
    active: boolean;
    released: number;
    pruned: number;
    full: boolean;
  }[] = [
    {
      name: 'read-only segments past the kept count are pruned',
      writes: [false, false, false],
      active: false,
      released: 0,
      pruned: 2,
      full: false,
    },
    {
      name: 'the oldest holds a write: nothing is pruned',
      writes: [true, false, false],
      active: false,
      released: 0,
      pruned: 0,
      full: false,
    },
    {
      name: 'pruning stops at the first segment holding a write (a prefix only)',
      writes: [false, true, false],
      active: false,
      released: 0,
      pruned: 1,
      full: false,
    },
    {
      name: 'a write released by the operator no longer holds its segment',
      writes: [true, false, false],
      active: false,
      released: 10,
      pruned: 2,
      full: false,
    },
    {
      name: 'a release that ends inside the segment does not release it',
      writes: [true, false, false],
      active: false,
      released: 9,
      pruned: 0,
      full: false,
    },
    {
      name: 'past the bound with unreleased writes: full, the rotation refused',
      writes: [true, true, true, true],
      active: true,
      released: 0,
      pruned: 0,
      full: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const segments = closed(c.writes);
      const firstSeq = segments.length * 10 + 1;
      const plan = planRotation({
        active: { firstSeq, firstPrev: AUDIT_GENESIS, holdsWrites: c.active },
        closed: segments,
        last: { seq: firstSeq + 9, hash: AUDIT_GENESIS },
        keepSegments: 2,
        maxSegments: 4,
        releasedThroughSeq: c.released,
        now: new Date('2026-12-01T00:00:00.000Z'),
      });
      expect(plan.pruned.length).to.equal(c.pruned);
      expect(plan.full !== undefined).to.equal(c.full);
      if (c.pruned > 0) expect(plan.record.segment?.retainedFromSeq).to.equal(c.pruned * 10 + 1);
    });
  }
});
