/**
 * `fleet upgrade --all` (issue 36 item 4), pure: the order — a canary first, then the rest in
 * fleet.yaml's order — and the sequencer: the canary alone, then at most `concurrency` at once,
 * nothing started after the first failure (the rest `skipped`). And the dead runner (item 3): a
 * transaction open with no runner is said within two answers, never before the runner was seen.
 */
import { setImmediate as tick } from 'node:timers/promises';
import { expect } from 'chai';
import type { RuntimeStatusResponse } from '@fleet/core';
import { sequenceUpgrades, upgradeOrder } from '../src/runtime/fleet-upgrade.js';
import { recoveryCommand, runnerWatch } from '../src/runtime/follow.js';
import { failureOutcome } from '../src/runtime/upgrade.js';

const FLEET = ['node-01', 'node-02', 'node-03', 'node-04', 'node-05', 'node-06'];

describe('fleet upgrade --all: the order (issue 36)', () => {
  const cases: {
    name: string;
    selected: readonly string[] | 'all';
    canary?: string;
    canaryIs: string | null;
    rest: string[];
  }[] = [
    {
      name: '--all: the first host of fleet.yaml first',
      selected: 'all',
      canaryIs: 'node-01',
      rest: FLEET.slice(1),
    },
    {
      name: '--all --canary node-04: it first, the rest in fleet.yaml order',
      selected: 'all',
      canary: 'node-04',
      canaryIs: 'node-04',
      rest: ['node-01', 'node-02', 'node-03', 'node-05', 'node-06'],
    },
    {
      name: '--host in another order: fleet.yaml order, each once',
      selected: ['node-05', 'node-02', 'node-05'],
      canaryIs: 'node-02',
      rest: ['node-05'],
    },
    { name: 'one host: the canary alone', selected: ['node-03'], canaryIs: 'node-03', rest: [] },
    { name: 'no hosts: nothing', selected: [], canaryIs: null, rest: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(upgradeOrder(FLEET, c.selected, c.canary)).to.deep.equal({
        canary: c.canaryIs,
        rest: c.rest,
      });
    });
  }
  it('a canary that is not selected, or a host fleet.yaml lacks, is refused', () => {
    expect(() => upgradeOrder(FLEET, ['node-01'], 'node-02')).to.throw(/canary node-02/);
    expect(() => upgradeOrder(FLEET, ['node-09'])).to.throw(/node-09/);
  });
});

describe('fleet upgrade --all: the sequencer (issue 36)', () => {
  /** A fake host upgrade: settles after `ticks[host]` turns, failing when named in `fail`. */
  function fakeFleet(options: { fail?: string[]; ticks?: Record<string, number> }) {
    const events: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const upgrade = async (host: string) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      for (let i = 0; i < (options.ticks?.[host] ?? 3); i += 1) await tick();
      inFlight -= 1;
      const ok = !(options.fail ?? []).includes(host);
      return { host, ok, exitCode: ok ? 0 : 6, result: ok ? 'accepted' : 'rolled-back' };
    };
    return {
      upgrade,
      events,
      onStart: (host: string) => events.push(`start ${host}`),
      onSettled: (s: { host: string; ok: boolean }) =>
        events.push(`${s.ok ? 'ok' : 'FAIL'} ${s.host}`),
      max: () => maxInFlight,
    };
  }
  const states = (run: Awaited<ReturnType<typeof sequenceUpgrades<string>>>) =>
    run.hosts.map((h) => `${h.host}:${h.state === 'settled' ? h.result : 'skipped'}`);

  const cases: {
    name: string;
    concurrency: number;
    fail?: string[];
    ticks?: Record<string, number>;
    max: number;
    states: string[];
    stoppedAt: string | null;
    firstEvents?: string[];
  }[] = [
    {
      name: 'all accepted, limit 4: the canary alone, then at most 4 at once',
      concurrency: 4,
      max: 4,
      states: FLEET.map((h) => `${h}:accepted`),
      stoppedAt: null,
      firstEvents: ['start node-01', 'ok node-01', 'start node-02'],
    },
    {
      name: 'limit 1: one at a time, in fleet.yaml order',
      concurrency: 1,
      max: 1,
      states: FLEET.map((h) => `${h}:accepted`),
      stoppedAt: null,
      firstEvents: [
        'start node-01',
        'ok node-01',
        'start node-02',
        'ok node-02',
        'start node-03',
        'ok node-03',
      ],
    },
    {
      name: 'the canary fails: nothing else is started',
      concurrency: 4,
      fail: ['node-01'],
      max: 1,
      states: ['node-01:rolled-back', ...FLEET.slice(1).map((h) => `${h}:skipped`)],
      stoppedAt: 'node-01',
    },
    {
      name: 'limit 1, the second fails: the rest are skipped, untouched',
      concurrency: 1,
      fail: ['node-02'],
      max: 1,
      states: [
        'node-01:accepted',
        'node-02:rolled-back',
        ...FLEET.slice(2).map((h) => `${h}:skipped`),
      ],
      stoppedAt: 'node-02',
    },
    {
      name: 'limit 2, node-02 fails fast while node-03 is slow: node-03 finishes, none more start',
      concurrency: 2,
      fail: ['node-02'],
      ticks: { 'node-02': 1, 'node-03': 10 },
      max: 2,
      states: [
        'node-01:accepted',
        'node-02:rolled-back',
        'node-03:accepted',
        ...FLEET.slice(3).map((h) => `${h}:skipped`),
      ],
      stoppedAt: 'node-02',
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const fleet = fakeFleet({
        ...(c.fail ? { fail: c.fail } : {}),
        ...(c.ticks ? { ticks: c.ticks } : {}),
      });
      const run = await sequenceUpgrades(upgradeOrder(FLEET, 'all'), c.concurrency, fleet.upgrade, {
        onStart: fleet.onStart,
        onSettled: fleet.onSettled,
      });
      expect(states(run)).to.deep.equal(c.states);
      expect(run.stoppedAt).to.equal(c.stoppedAt);
      expect(fleet.max()).to.equal(c.max);
      if (c.firstEvents) {
        expect(fleet.events.slice(0, c.firstEvents.length)).to.deep.equal(c.firstEvents);
      }
      // Nothing starts after the first failure settled.
      const failedAt = fleet.events.findIndex((e) => e.startsWith('FAIL'));
      if (failedAt !== -1) {
        expect(fleet.events.slice(failedAt).filter((e) => e.startsWith('start'))).to.deep.equal([]);
      }
    });
  }
});

describe('fleet upgrade --all: a host failure as its outcome', () => {
  const cases: [string, number, string][] = [
    ['ROLLED_BACK', 6, 'rolled-back'],
    ['RECOVERY_REQUIRED', 6, 'manual-recovery-required'],
    ['RUNNER_DIED', 6, 'runner-died'],
    ['ACCEPTANCE_FAILED', 6, 'failed'],
    ['RUNTIME_NOT_ACTIVATED', 3, 'failed'],
    ['SIGNATURE_INVALID', 7, 'failed'],
    ['HOST_UNREACHABLE', 5, 'unreachable'],
    ['AUTH_INVALID', 4, 'denied'],
  ];
  for (const [code, exit, outcome] of cases) {
    it(`${code} (exit ${exit}): ${outcome}`, () => {
      expect(failureOutcome(code, exit)).to.equal(outcome);
    });
  }
});

describe('following a transaction: a dead runner is noticed (issue 36)', () => {
  type Answer = { steps: number; last: string; busy: number | null; id?: string } | null;
  const STEPS = ['begin', 'staged', 'activated', 'supervisor-restarted', 'accepted', 'end'];
  const status = (a: Answer): RuntimeStatusResponse =>
    ({
      busy: a?.busy ?? null,
      transaction:
        a === null
          ? null
          : {
              id: a.id ?? 'T1',
              lastStep: a.last,
              steps: STEPS.slice(0, a.steps).map((step, i) => ({
                seq: i + 1,
                at: '',
                step,
                detail: '',
              })),
            },
    }) as unknown as RuntimeStatusResponse;
  const cases: {
    name: string;
    steps?: number;
    answers: { at: number; answer: Answer }[];
    /** The answer (index) at which it is said, and the step; `null`: never. */
    said: [number, string] | null;
  }[] = [
    {
      name: 'killed at activated: past staged with no runner, said at the second answer',
      steps: 2,
      answers: [
        { at: 0, answer: { steps: 2, last: 'staged', busy: 42 } },
        { at: 500, answer: { steps: 3, last: 'activated', busy: null } },
        { at: 1000, answer: { steps: 3, last: 'activated', busy: null } },
      ],
      said: [2, 'activated'],
    },
    {
      name: 'first seen already at supervisor-restarted, runner dead: two answers suffice',
      steps: 2,
      answers: [
        { at: 0, answer: { steps: 4, last: 'supervisor-restarted', busy: null } },
        { at: 500, answer: { steps: 4, last: 'supervisor-restarted', busy: null } },
      ],
      said: [1, 'supervisor-restarted'],
    },
    {
      name: 'a runner that journals end between the reads: one answer without it is not enough',
      steps: 2,
      answers: [
        { at: 0, answer: { steps: 5, last: 'accepted', busy: null } },
        { at: 500, answer: { steps: 6, last: 'end', busy: null } },
      ],
      said: null,
    },
    {
      name: 'the runner still waiting for its go (staged, not busy): not said within the grace',
      steps: 2,
      answers: [
        { at: 0, answer: { steps: 2, last: 'staged', busy: null } },
        { at: 10_000, answer: { steps: 2, last: 'staged', busy: null } },
        { at: 40_000, answer: { steps: 2, last: 'staged', busy: null } },
      ],
      said: null,
    },
    {
      name: 'a runner that never started: said after the grace',
      steps: 2,
      answers: [
        { at: 0, answer: { steps: 2, last: 'staged', busy: null } },
        { at: 46_000, answer: { steps: 2, last: 'staged', busy: null } },
        { at: 46_500, answer: { steps: 2, last: 'staged', busy: null } },
      ],
      said: [2, 'staged'],
    },
    {
      name: 'a resumed transaction (steps 5 at accepted): the old runner gone is not the new one',
      steps: 5,
      answers: [
        { at: 0, answer: { steps: 5, last: 'accepted', busy: null } },
        { at: 500, answer: { steps: 5, last: 'accepted', busy: null } },
        { at: 1_000, answer: { steps: 5, last: 'accepted', busy: 77 } },
        { at: 1_500, answer: { steps: 5, last: 'accepted', busy: null } },
        { at: 2_000, answer: { steps: 5, last: 'accepted', busy: null } },
      ],
      said: [4, 'accepted'],
    },
    {
      name: 'a runner at work the whole time: never',
      steps: 2,
      answers: [
        { at: 0, answer: { steps: 3, last: 'activated', busy: 42 } },
        { at: 500, answer: { steps: 4, last: 'supervisor-restarted', busy: 42 } },
        { at: 1_000, answer: { steps: 4, last: 'supervisor-restarted', busy: 42 } },
      ],
      said: null,
    },
    {
      name: 'another transaction, or none: never',
      steps: 2,
      answers: [
        { at: 0, answer: { steps: 3, last: 'activated', busy: null, id: 'T0' } },
        { at: 500, answer: { steps: 3, last: 'activated', busy: null, id: 'T0' } },
        { at: 1_000, answer: null },
      ],
      said: null,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      let now = 0;
      const watch = runnerWatch({
        transaction: 'T1',
        ...(c.steps === undefined ? {} : { steps: c.steps }),
        now: () => now,
      });
      let said: [number, string] | null = null;
      c.answers.forEach(({ at, answer }, index) => {
        now = at;
        const died = watch(status(answer));
        if (died !== null && said === null) said = [index, died];
      });
      expect(said).to.deep.equal(c.said);
    });
  }
});

describe('bootstrap status: what to run for an interrupted transaction (issue 36)', () => {
  const cases: [RuntimeStatusResponse['next'], string | null][] = [
    ['resume-acceptance', 'fleet upgrade node-01 --resume --confirm'],
    ['rollback', 'fleet bootstrap rollback node-01 --confirm'],
    ['abort', 'fleet bootstrap rollback node-01 --confirm'],
    ['wait', null],
    ['operator', null],
    ['none', null],
  ];
  for (const [next, command] of cases) {
    it(`${next}: ${command ?? 'no command'}`, () => {
      expect(recoveryCommand('node-01', next)).to.equal(command);
    });
  }
});
