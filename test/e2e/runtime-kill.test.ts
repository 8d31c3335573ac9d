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
 * Issue 36: where a real build is the target and the runner is the one killed (`activated`
 * through `end`), the upgrade is the operator's `fleet upgrade` — and it notices the dead runner
 * within seconds (`RUNNER_DIED`, exit 6: the controller answers), never "the controller stopped
 * answering" after 300 s. Where status recommends `resume-acceptance` (`supervisor-restarted`,
 * `accepted`), `fleet version` does not call the runtime current, and `fleet upgrade HOST
 * --resume` ends the transaction accepted, with a truthful `bootstrap status` and `fleet status`.
 *
 * One node serves every step, in turn: the failpoint is armed through a drop-in of the node's
 * unit (daemon-reload, restart) and the node is rolled back to generation A between steps, which
 * each case checks anyway. Staging the target is then paid once (a staged generation is reused),
 * and nothing waits a fixed time: every wait is for a state the journal, the lock or the
 * controller reaches, read directly (no process spawned per poll). `FLEET_KILL_TIMING=1` prints
 * when each phase of each case starts, for measuring the suite.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { readCurrentPointer, runtimeLayout, type RuntimeStatusResponse } from '@fleet/core';
import { runtimeLockHolder } from '@fleet/controller';
import { fakeRuntimeArtifact } from '@fleet/testkit';
import { packedRuntimeArtifact, repackedArtifact } from '../src/artifact.js';
import { json, tempDir, waitFor, type FleetRun } from '../src/fleet.js';
import {
  carriedCommit,
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
  /** Issue 36: the operator's `fleet upgrade` (the runner is killed): exit 0, or its runner died. */
  readonly operator?: 'runner-died' | 'accepted';
  /** Issue 36: status recommends it; `fleet upgrade HOST --resume` ends it accepted. */
  readonly resume?: boolean;
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
    operator: 'runner-died',
  },
  {
    step: 'supervisor-restarted',
    target: 'real',
    state: 'in-progress',
    next: 'resume-acceptance',
    // Resumed first: the operator's rollback would journal the armed step again.
    rollback: 'node',
    final: 'rolled-back',
    operator: 'runner-died',
    resume: true,
  },
  {
    step: 'accepted',
    target: 'real',
    state: 'accepted',
    next: 'resume-acceptance',
    rollback: 'node',
    final: 'rolled-back',
    operator: 'runner-died',
    resume: true,
  },
  {
    step: 'end',
    target: 'real',
    state: 'accepted',
    next: 'none',
    rollback: 'node',
    final: 'rolled-back',
    operator: 'accepted',
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
/** The runtime item of `fleet version --json`'s only host. */
const runtimeItem = (run: FleetRun): { state: string; detail?: string } => {
  const report = json<{ hosts: { items: { kind: string; state: string; detail?: string }[] }[] }>(
    run,
  );
  const item = report.hosts[0]?.items.find((i) => i.kind === 'runtime');
  if (!item) throw new Error(`no runtime item: ${run.stdout}${run.stderr}`);
  return item;
};
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
    // The operator's canonical runtime is the second build (issue 36: `fleet upgrade`, --resume).
    const repo = join(scratch.path, 'operator', 'repo');
    await mkdir(join(repo, 'artifacts'), { recursive: true });
    const file = `artifacts/fleet-${second.pkg.version}.tgz`;
    await copyFile(second.path, join(repo, file));
    const manifest = (await readFile(join(repo, 'fleet.yaml'), 'utf8')).replace(
      /^canonicalVersion: .*$/m,
      `canonicalVersion: ${second.pkg.version}`,
    );
    await writeFile(
      join(repo, 'fleet.yaml'),
      `${manifest}artifacts:\n  - { version: ${second.pkg.version}, file: ${file}, sha256: ${sha256(second.bytes)}, commit: ${carriedCommit(second.bytes)} }\n`,
    );
    execFileSync('git', ['-C', repo, 'add', '-A']);
    execFileSync('git', [
      '-C',
      repo,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.invalid',
      'commit',
      '-q',
      '-m',
      'canonical: the second build',
    ]);
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
      if (kill.operator !== undefined) {
        // The operator's upgrade, its runner killed at the step: it says so within seconds.
        const started = Date.now();
        const upgraded = await fleet([
          'upgrade',
          'node-01',
          '--confirm',
          '--acceptance-timeout',
          '8',
          '--json',
        ]);
        const took = Date.now() - started;
        phase(`${kill.step}: fleet upgrade exited ${upgraded.exitCode} after ${took} ms`);
        if (kill.operator === 'accepted') {
          expect(upgraded.exitCode, upgraded.stderr + upgraded.stdout).to.equal(0);
        } else {
          expect(upgraded.exitCode, upgraded.stderr + upgraded.stdout).to.equal(6);
          const error = json<{ error: { code: string; message: string } }>(upgraded).error;
          expect(error.code).to.equal('RUNNER_DIED');
          expect(error.message).to.match(
            new RegExp(
              `the runner of transaction \\S+ died at step "${kill.step}"; the controller answers`,
            ),
          );
          expect(upgraded.stderr + upgraded.stdout).to.not.match(/stopped answering/);
          // Seconds, not the 300 s follow timeout (staging and a restart included).
          expect(took).to.be.below(90_000);
        }
        // The progress lines each name the transaction, in the journal's order.
        const lines = upgraded.stderr
          .split('\n')
          .filter((l) => /transaction \S+: (begin|staged|activated)/.test(l));
        expect(lines.length, upgraded.stderr).to.be.greaterThan(0);
      } else {
        await upgradeThroughController(node, bytes, expectationFor(bytes, pkg), {
          acceptanceTimeoutMs: 8_000,
        }).catch(() => undefined); // a controller killed mid-request answers nothing
      }
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

      if (kill.resume) {
        // Not current while the transaction is open (issue 36 item 4)…
        const open = await fleet(['version', '--json']);
        expect(runtimeItem(open), open.stdout + open.stderr).to.deep.include({ state: 'stale' });
        expect(runtimeItem(open).detail).to.match(
          new RegExp(`interrupted at "${kill.step}": not accepted, recovery required`),
        );
        expect(open.exitCode, open.stderr).to.equal(1);
        // …what status recommends, as a command…
        const human = await fleet(['bootstrap', 'status', 'node-01']);
        expect(human.stdout).to.include(
          'next        resume-acceptance: fleet upgrade node-01 --resume --confirm',
        );
        // …and the resume ends it accepted.
        phase(`${kill.step}: resume`);
        const resumed = await fleet(['upgrade', 'node-01', '--resume', '--confirm', '--json']);
        expect(resumed.exitCode, resumed.stderr + resumed.stdout).to.equal(0);
        expect(json<{ outcome: string; resumed: boolean }>(resumed)).to.deep.include({
          outcome: 'accepted',
          resumed: true,
        });
        const closed = json<{ status: RuntimeStatusResponse }>(
          await fleet(['bootstrap', 'status', 'node-01', '--json']),
        ).status;
        expect(closed.state, JSON.stringify(closed, null, 2)).to.equal('accepted');
        expect(closed.next).to.equal('none');
        expect(closed.transaction?.lastStep).to.equal('end');
        expect(closed.transaction?.outcome).to.equal('accepted');
        expect(closed.observed.live).to.equal(sha256(second.bytes));
        const fleetStatus = json<{ hosts: { transaction: unknown; attention: string[] }[] }>(
          await fleet(['status', '--json']),
        );
        expect(fleetStatus.hosts[0]?.attention.join('\n')).to.not.match(/transaction|recovery/);
        const after = await fleet(['version', '--json']);
        expect(runtimeItem(after), after.stdout + after.stderr).to.deep.include({
          state: 'current',
        });
        // Nothing left to resume: a precondition (exit 3).
        const again = await fleet(['upgrade', 'node-01', '--resume', '--confirm']);
        expect(again.exitCode, again.stderr).to.equal(3);
        expect(again.stderr).to.match(/nothing to resume/);
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
