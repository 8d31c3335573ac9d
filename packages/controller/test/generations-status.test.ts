/**
 * Runtime status (contract §12): the journal reconciled with observation — never journal intent as
 * liveness. One row per situation.
 */
import { expect } from 'chai';
import type { IdentityResponse, ObservedSupervisor, PointerState } from '@fleet/core';
import { parseJournal } from '../src/generations/journal.js';
import {
  reconcileStatus,
  type RuntimeObservation,
  type RuntimeStatus,
} from '../src/generations/status.js';
import {
  BUILD_A,
  BUILD_B,
  BUILD_C,
  expectation,
  identityFor,
  JournalText,
} from './support/runtime.js';

const pointer = (buildId: string | null): PointerState =>
  buildId === null
    ? { state: 'absent' }
    : { state: 'set', kind: 'symlink', buildId, target: `generations/${buildId}` };
const running = (buildId: string): ObservedSupervisor => ({
  present: true,
  enabled: true,
  running: true,
  state: 'active',
  generation: buildId,
  nodeIdFlag: 'node-01',
  source: 'process',
});
const stopped: ObservedSupervisor = {
  present: true,
  enabled: true,
  running: false,
  state: 'failed',
};
const live = (buildId: string, overrides: Partial<IdentityResponse> = {}): IdentityResponse =>
  identityFor(expectation(buildId), overrides);

/** Everything agrees that `buildId` runs. */
const healthy = (buildId: string): RuntimeObservation => ({
  pointer: pointer(buildId),
  supervisor: running(buildId),
  identity: live(buildId),
});

function status(journal: JournalText | string, observation: RuntimeObservation): RuntimeStatus {
  return reconcileStatus(
    parseJournal(typeof journal === 'string' ? journal : journal.text()),
    observation,
  );
}

const upgrade = (until: Parameters<typeof JournalText.upgrade>[2]) =>
  JournalText.upgrade(BUILD_B, BUILD_A, until);
const failedAfterActivation = () =>
  upgrade('supervisor-restarted').add('failed', {
    during: 'acceptance',
    code: 'ACCEPTANCE_FAILED',
    message: 'wrong build',
    criteria: ['build-sha256: …'],
  });

describe('reconcileStatus', () => {
  const rows: [string, JournalText | string, RuntimeObservation, Partial<RuntimeStatus>][] = [
    [
      'empty journal, nothing installed',
      '',
      { pointer: pointer(null), supervisor: null, identity: null },
      { state: 'idle', next: 'none', journal: 'empty' },
    ],
    [
      'empty journal, a generation runs everywhere',
      '',
      healthy(BUILD_A),
      { state: 'idle', next: 'none' },
    ],
    [
      'empty journal, the live runtime is not current',
      '',
      { ...healthy(BUILD_A), identity: live(BUILD_C) },
      { state: 'inconsistent', next: 'operator' },
    ],
    [
      'empty journal, the supervisor runs another generation',
      '',
      { ...healthy(BUILD_A), supervisor: running(BUILD_C) },
      { state: 'inconsistent' },
    ],
    [
      'accepted, and B answers and passes acceptance',
      upgrade('end'),
      healthy(BUILD_B),
      { state: 'accepted', next: 'none', problems: [] },
    ],
    [
      'accepted but no end record yet (crash after accepted): resumed to close it (issue 36)',
      upgrade('accepted'),
      healthy(BUILD_B),
      { state: 'accepted', next: 'resume-acceptance' },
    ],
    [
      'accepted, no end record, its runner still at work: nothing to do',
      upgrade('accepted'),
      { ...healthy(BUILD_B), busy: true },
      { state: 'accepted', next: 'none' },
    ],
    [
      'accepted, but nothing answers: never journal intent as liveness',
      upgrade('end'),
      { ...healthy(BUILD_B), identity: null },
      { state: 'inconsistent', next: 'operator' },
    ],
    [
      'accepted, but the unit is not running',
      upgrade('end'),
      { ...healthy(BUILD_B), supervisor: stopped },
      { state: 'inconsistent' },
    ],
    [
      'accepted, but current points back at A',
      upgrade('end'),
      { ...healthy(BUILD_B), pointer: pointer(BUILD_A) },
      { state: 'inconsistent' },
    ],
    [
      'accepted, but the live B reports another node id',
      upgrade('end'),
      { ...healthy(BUILD_B), identity: live(BUILD_B, { nodeId: 'node-02' }) },
      { state: 'inconsistent' },
    ],
    [
      'accepted, but the live runtime is A',
      upgrade('end'),
      { ...healthy(BUILD_B), identity: live(BUILD_A) },
      { state: 'inconsistent' },
    ],
    [
      'rolled back, A runs and passes',
      failedAfterActivation()
        .add('rolled-back', { buildId: BUILD_A })
        .add('end', { outcome: 'rolled-back' }),
      healthy(BUILD_A),
      { state: 'rolled-back', next: 'none' },
    ],
    [
      'rolled back, but B still answers',
      failedAfterActivation()
        .add('rolled-back', { buildId: BUILD_A })
        .add('end', { outcome: 'rolled-back' }),
      { ...healthy(BUILD_A), identity: live(BUILD_B) },
      { state: 'inconsistent' },
    ],
    [
      'a rollback transaction accepted',
      JournalText.upgrade(BUILD_A, BUILD_B, 'end', 'rollback'),
      healthy(BUILD_A),
      { state: 'rolled-back' },
    ],
    [
      'manual recovery recorded',
      failedAfterActivation()
        .add('manual-recovery-required', { reason: 'no valid prior generation' })
        .add('end', { outcome: 'manual-recovery-required' }),
      { pointer: pointer(BUILD_B), supervisor: stopped, identity: null },
      { state: 'manual-recovery-required', next: 'operator' },
    ],
    [
      'failed before activation and ended: A still runs',
      new JournalText()
        .add('begin', {
          kind: 'upgrade',
          supervisor: 'systemd-user',
          target: expectation(BUILD_B),
          prior: expectation(BUILD_A),
        })
        .add('failed', {
          during: 'stage',
          code: 'GENERATION_INVALID',
          message: 'tampered',
          criteria: [],
        })
        .add('end', { outcome: 'failed' }),
      healthy(BUILD_A),
      { state: 'idle', next: 'none' },
    ],
    [
      'begun, pointer at A, nobody working on it',
      upgrade('begin'),
      healthy(BUILD_A),
      { state: 'in-progress', next: 'abort' },
    ],
    [
      'staged, pointer at A, an upgrade holds the lock',
      upgrade('staged'),
      { ...healthy(BUILD_A), busy: true },
      { state: 'in-progress', next: 'wait' },
    ],
    [
      'staged, pointer already at B (crash after the flip, before its record)',
      upgrade('staged'),
      { pointer: pointer(BUILD_B), supervisor: running(BUILD_A), identity: live(BUILD_A) },
      { state: 'in-progress', next: 'rollback' },
    ],
    [
      'restarted, B runs and passes: acceptance can be resumed',
      upgrade('supervisor-restarted'),
      healthy(BUILD_B),
      { state: 'in-progress', next: 'resume-acceptance' },
    ],
    [
      'restarted, B does not answer',
      upgrade('supervisor-restarted'),
      { ...healthy(BUILD_B), identity: null },
      { state: 'in-progress', next: 'rollback' },
    ],
    [
      'failed after activation, not yet rolled back',
      failedAfterActivation(),
      healthy(BUILD_B),
      { state: 'in-progress', next: 'rollback' },
    ],
    [
      'open, but current points at a third generation',
      upgrade('activated'),
      { ...healthy(BUILD_C) },
      { state: 'inconsistent', next: 'operator' },
    ],
    [
      'begun, current already at the never-staged target',
      upgrade('begin'),
      healthy(BUILD_B),
      { state: 'inconsistent' },
    ],
    [
      'a torn last record is only "step not done"',
      `${upgrade('staged').text()}{"v":1,"seq":3`,
      healthy(BUILD_A),
      { state: 'in-progress', journal: 'torn-tail', next: 'abort' },
    ],
  ];

  for (const [name, journal, observation, want] of rows) {
    it(name, () => {
      const got = status(journal, observation);
      expect(
        Object.fromEntries(Object.keys(want).map((k) => [k, got[k as keyof RuntimeStatus]])),
      ).to.deep.equal(want);
    });
  }

  it('a corrupt journal is manual-recovery-required with RECOVERY_REQUIRED, whatever runs', () => {
    const corrupt = upgrade('end').text().replace('"reused":false', '"reused":true');
    const got = status(corrupt, healthy(BUILD_B));
    expect(got).to.include({
      state: 'manual-recovery-required',
      journal: 'corrupt',
      code: 'RECOVERY_REQUIRED',
      next: 'operator',
    });
    expect(got.problems[0]).to.equal('the runtime journal is corrupt at line 2: bad checksum');
  });

  it('an invalid pointer is never idle', () => {
    const got = status('', {
      pointer: { state: 'invalid', detail: 'current is a directory' },
      supervisor: null,
      identity: null,
    });
    expect(got.state).to.equal('inconsistent');
    expect(got.problems).to.deep.equal(['current is invalid: current is a directory']);
  });

  it('explains an inconsistent accepted state, one line per disagreement', () => {
    const got = status(upgrade('end'), {
      pointer: pointer(BUILD_A),
      supervisor: stopped,
      identity: null,
    });
    expect(got.problems).to.deep.equal([
      `the journal says accepted ${BUILD_B.slice(0, 12)}, but current points at ${BUILD_A.slice(0, 12)}`,
      'the supervisor reports the runtime not running (failed)',
      'no live runtime answered: accepted is not confirmed',
    ]);
    expect(got.transaction).to.include({
      kind: 'upgrade',
      target: BUILD_B,
      prior: BUILD_A,
      lastStep: 'end',
      outcome: 'accepted',
    });
    expect(got.observed).to.deep.equal({ pointer: BUILD_A, supervisor: null, live: null });
  });
});
