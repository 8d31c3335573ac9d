/**
 * Kill -9 at every journal step of a runtime transaction (contract §15, catalogue 53), on a real
 * `systemd --user` manager (test/src/runtime-node.ts): afterwards `fleet bootstrap status` tells
 * the truth — the journal reconciled with what runs, never intent as liveness — and a rollback
 * restores the prior generation, verified. The failpoint `runtime.journal.<step>:kill` SIGKILLs
 * the process that has just made that step durable: the controller for `begin` and `staged` (the
 * stage route; the manager restarts it, `Restart=on-failure`), the runner — a transient unit of
 * its own — for the rest. What status must say right after each kill:
 *
 * - `begin`, `staged`: nothing activated — in progress, to be aborted;
 * - `activated`: `current` flipped, the old controller still running — in progress, to be rolled
 *   back, not "upgraded";
 * - `supervisor-restarted`: the new runtime runs but was never accepted — in progress, not
 *   `accepted`;
 * - `accepted`, `end`: the new runtime runs and passes acceptance — accepted;
 * - `failed` (a build that lies about its identity): the liar runs, the rollback is owed;
 * - `rolled-back` (the liar's rollback): the prior runs and passes acceptance — rolled back.
 *
 * (`manual-recovery-required` is reached only when a rollback itself fails; the journal's own
 * handling of it is covered by the generations tests.)
 *
 * One node serves every step, in turn: the failpoint is armed through a drop-in of the node's
 * unit (daemon-reload, restart) and the node is rolled back to generation A between steps, which
 * each case checks anyway. Staging the target is then paid once (a staged generation is reused),
 * and nothing waits a fixed time: every wait is for a state the journal, the lock or the
 * controller reaches, read directly (no process spawned per poll). `FLEET_KILL_TIMING=1` prints
 * when each phase of each case starts, for measuring the suite.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { readCurrentPointer, runtimeLayout, type RuntimeStatusResponse } from '@fleet/core';
import { runtimeLockHolder } from '@fleet/controller';
import { fakeRuntimeArtifact } from '@fleet/testkit';
import { packedRuntimeArtifact, repackedArtifact } from '../src/artifact.js';
import { json, tempDir, waitFor, type FleetRun } from '../src/fleet.js';
import {
  expectationFor,
  operatorOf,
  receiverStatus,
  runRunner,
  sha256,
  startRuntimeNode,
  upgradeThroughController,
  type RuntimeNode,
} from '../src/runtime-node.js';

interface KillCase {
  readonly step: string;
  /** The target reports the truth (a second real build) or lies (it must fail acceptance). */
  readonly target: 'real' | 'liar';
  /** What status says right after the kill. */
  readonly state: RuntimeStatusResponse['state'];
  readonly next?: RuntimeStatusResponse['next'];
  /**
   * Who rolls back: the operator (`fleet bootstrap rollback` through the controller) — or the
   * node itself (`fleet controller runtime-run --mode rollback`, as its user) where a liar
   * answers, or where the operator's rollback would journal the armed step again and be killed
   * by the same failpoint (a rollback transaction journals `accepted` and `end`).
   */
  readonly rollback: 'operator' | 'node';
  /** What status says after the rollback. */
  readonly final: RuntimeStatusResponse['state'];
}

const CASES: readonly KillCase[] = [
  {
    step: 'begin',
    target: 'real',
    state: 'in-progress',
    next: 'abort',
    rollback: 'operator',
    final: 'idle',
  },
  {
    step: 'staged',
    target: 'real',
    state: 'in-progress',
    next: 'abort',
    rollback: 'operator',
    final: 'idle',
  },
  {
    step: 'activated',
    target: 'real',
    state: 'in-progress',
    next: 'rollback',
    rollback: 'operator',
    final: 'rolled-back',
  },
  {
    step: 'supervisor-restarted',
    target: 'real',
    state: 'in-progress',
    rollback: 'operator',
    final: 'rolled-back',
  },
  {
    step: 'accepted',
    target: 'real',
    state: 'accepted',
    next: 'none',
    rollback: 'node',
    final: 'rolled-back',
  },
  {
    step: 'end',
    target: 'real',
    state: 'accepted',
    next: 'none',
    rollback: 'node',
    final: 'rolled-back',
  },
  {
    step: 'failed',
    target: 'liar',
    state: 'in-progress',
    next: 'rollback',
    rollback: 'node',
    final: 'rolled-back',
  },
  {
    step: 'rolled-back',
    target: 'liar',
    state: 'rolled-back',
    next: 'none',
    rollback: 'node',
    final: 'rolled-back',
  },
];

/** The steps the node's journal holds, in order (read as root: no process spawned per poll). */
const journalSteps = async (node: RuntimeNode): Promise<string[]> =>
  (
    await readFile(join(node.home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8').catch(
      () => '',
    )
  )
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { step: string }).step);
const lockFree = async (node: RuntimeNode) => (await runtimeLockHolder(node.home)) === null;
const T0 = Date.now();
const phase = (what: string) => {
  if (process.env['FLEET_KILL_TIMING'])
    process.stderr.write(`[${((Date.now() - T0) / 1000).toFixed(1)}s] ${what}\n`);
};

describe('kill -9 at every journal step of an upgrade on a real systemd --user manager: status tells the truth, rollback restores', function () {
  this.timeout(900_000);
  let scratch: { path: string; cleanup: () => Promise<void> };
  let second: Awaited<ReturnType<typeof repackedArtifact>>;
  let node: RuntimeNode;
  let fleet: (args: readonly string[]) => Promise<FleetRun>;
  const liar = fakeRuntimeArtifact({ lie: { nodeId: 'node-99' }, salt: 'kill' });

  /**
   * Arms `FLEET_FAILPOINT` for the node's controller — and so for the runners it starts, which
   * get its environment — through a drop-in of its unit, and restarts it on it.
   */
  async function armFailpoint(value: string): Promise<void> {
    const { manager, unit } = node;
    const dropIn = join(manager.home, '.config/systemd/user', `${unit}.d`);
    const wrote = await manager.run('sh', [
      '-c',
      'mkdir -p "$1" && printf "[Service]\\nEnvironment=FLEET_FAILPOINT=%s\\n" "$2" > "$1/failpoint.conf"',
      'sh',
      dropIn,
      value,
    ]);
    expect(wrote.exitCode, wrote.stderr).to.equal(0);
    expect((await manager.systemctl('daemon-reload')).exitCode).to.equal(0);
    const before = Number((await node.unitState(['MainPID']))['MainPID']);
    expect((await node.systemctl('restart')).exitCode).to.equal(0);
    await waitFor(
      async () => {
        const identity = await node.client.identity().catch(() => null);
        return identity !== null && identity.pid !== before;
      },
      90_000,
      `the controller to answer with ${value}`,
    );
  }

  before(async function () {
    scratch = await tempDir('fleet-runtime-kill-');
    second = await repackedArtifact(await packedRuntimeArtifact(), '0.1.0-kill.2', scratch.path);
    node = await startRuntimeNode(this);
    fleet = await operatorOf(node, join(scratch.path, 'operator'));
  });
  after(async () => {
    await node?.dispose();
    await scratch?.cleanup();
  });

  for (const kill of CASES) {
    it(`after a kill at "${kill.step}"`, async () => {
      phase(`${kill.step}: arm`);
      await armFailpoint(`runtime.journal.${kill.step}:kill`);
      phase(`${kill.step}: upgrade`);
      const steps = (await journalSteps(node)).length;
      const bytes = kill.target === 'real' ? second.bytes : liar;
      const pkg =
        kill.target === 'real' ? second.pkg : { name: '@fleet/cli', version: '0.0.0-fake' };
      await upgradeThroughController(node, bytes, expectationFor(bytes, pkg), {
        acceptanceTimeoutMs: 8_000,
      }).catch(() => undefined); // a controller killed mid-request answers nothing
      // This transaction's record of the step (earlier cases journaled the same steps).
      await waitFor(
        async () => (await journalSteps(node)).slice(steps).includes(kill.step),
        120_000,
        `the journal to record ${kill.step}`,
      );
      phase(`${kill.step}: journaled`);
      // The killed process is gone: nothing holds the runtime lock any more.
      await waitFor(() => lockFree(node), 60_000, 'the lock to be free');
      phase(`${kill.step}: status`);

      // The node-local reconciliation, and — where a real build answers — the operator's.
      const after = await receiverStatus(node);
      expect(after.state, JSON.stringify(after, null, 2)).to.equal(kill.state);
      if (kill.next) expect(after.next).to.equal(kill.next);
      expect(after.transaction?.lastStep).to.equal(kill.step);
      if (kill.target === 'real' || kill.step === 'rolled-back') {
        // At `begin` and `staged` the controller was killed: the manager starts it again.
        await waitFor(
          async () => (await node.client.identity().catch(() => null)) !== null,
          60_000,
          'the controller to answer',
        );
        const shown = await fleet(['bootstrap', 'status', 'node-01', '--json']);
        expect(shown.exitCode, shown.stderr + shown.stdout).to.equal(0);
        const status = json<{ through: string; status: RuntimeStatusResponse }>(shown);
        expect(status.through).to.equal('controller');
        expect(status.status.state).to.equal(kill.state);
        expect(status.status.transaction?.lastStep).to.equal(kill.step);
        if (kill.state === 'accepted') {
          expect(status.status.observed.live).to.equal(sha256(second.bytes));
        } else {
          expect(status.status.state).to.not.equal('accepted');
        }
      }

      phase(`${kill.step}: rollback`);
      if (kill.rollback === 'operator') {
        const back = await fleet(['bootstrap', 'rollback', 'node-01', '--confirm', '--json']);
        expect(back.exitCode, back.stderr + back.stdout).to.equal(0);
      } else {
        const rollback = await runRunner(node, 'rollback', `kill-${kill.step}`);
        expect(rollback.code, rollback.output).to.equal(0);
      }
      await waitFor(
        async () => (await node.client.identity().catch(() => null)) !== null,
        90_000,
        'the prior runtime to answer',
      );
      await waitFor(
        async () => (await journalSteps(node)).at(-1) === 'end' && (await lockFree(node)),
        120_000,
        'the rollback to end',
      );
      phase(`${kill.step}: final status`);
      // The controller's own answer (no process spawned): the prior generation runs again.
      const final = await node.client.runtimeStatus({ supervisor: 'systemd-user' });
      expect(final.state, JSON.stringify(final, null, 2)).to.equal(kill.final);
      expect(final.observed.live).to.equal(node.artifact.sha256);
      const pointer = await readCurrentPointer(runtimeLayout(node.home, 'linux'));
      expect(pointer.state === 'set' && pointer.buildId).to.equal(node.artifact.sha256);
      phase(`${kill.step}: done`);
    });
  }
});
