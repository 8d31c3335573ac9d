/**
 * Kill -9 at the journal steps of an upgrade that matter (contract §15, catalogue 53), on a real
 * `systemd --user` manager (test/src/runtime-node.ts): afterwards `fleet bootstrap status` tells
 * the truth — the journal reconciled with what runs, never intent as liveness — and a rollback
 * restores the prior generation, verified. The failpoint `runtime.journal.<step>:kill` SIGKILLs
 * the process that has just made that step durable: the controller for `staged` (the manager
 * restarts it: `Restart=on-failure`), the runner — a transient unit of its own — for the rest:
 *
 * - `staged`: nothing activated: in progress, to be aborted;
 * - `activated`: `current` flipped, the old controller still running: in progress, to be rolled
 *   back — not "upgraded";
 * - `supervisor-restarted`: the new runtime runs but was never accepted: in progress, not
 *   `accepted`;
 * - `failed` (a build that lies about its identity): the liar runs, the rollback is owed.
 *
 * (`begin`, `accepted`, `end` and `rolled-back` change nothing of what runs beside the steps
 * above; the journal's own handling of every step is covered by the generations tests.)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { readCurrentPointer, runtimeLayout, type RuntimeStatusResponse } from '@fleet/core';
import { fakeRuntimeArtifact } from '@fleet/testkit';
import { packedRuntimeArtifact, repackedArtifact } from '../src/artifact.js';
import { json, tempDir, waitFor, type FleetRun } from '../src/fleet.js';
import {
  expectationFor,
  operatorOf,
  receiverStatus,
  runRunner,
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
  /** What status says after the rollback. */
  readonly final: RuntimeStatusResponse['state'];
}

const CASES: readonly KillCase[] = [
  { step: 'staged', target: 'real', state: 'in-progress', next: 'abort', final: 'idle' },
  {
    step: 'activated',
    target: 'real',
    state: 'in-progress',
    next: 'rollback',
    final: 'rolled-back',
  },
  { step: 'supervisor-restarted', target: 'real', state: 'in-progress', final: 'rolled-back' },
  { step: 'failed', target: 'liar', state: 'in-progress', next: 'rollback', final: 'rolled-back' },
];

const journalOf = (node: RuntimeNode) =>
  readFile(join(node.home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8').catch(() => '');

describe('kill -9 at the journal steps of an upgrade on a real systemd --user manager: status tells the truth, rollback restores', function () {
  this.timeout(600_000);
  let scratch: { path: string; cleanup: () => Promise<void> };
  let second: Awaited<ReturnType<typeof repackedArtifact>>;

  before(async () => {
    scratch = await tempDir('fleet-runtime-kill-');
    second = await repackedArtifact(await packedRuntimeArtifact(), '0.1.0-kill.2', scratch.path);
  });
  after(async () => {
    await scratch?.cleanup();
  });

  for (const kill of CASES) {
    it(`after a kill at "${kill.step}"`, async function () {
      const node = await startRuntimeNode(this, {
        environment: { FLEET_FAILPOINT: `runtime.journal.${kill.step}:kill` },
      });
      try {
        const fleet = await operatorOf(node, join(scratch.path, kill.step));
        const bytes =
          kill.target === 'real'
            ? second.bytes
            : fakeRuntimeArtifact({ lie: { nodeId: 'node-99' }, salt: kill.step });
        const pkg =
          kill.target === 'real' ? second.pkg : { name: '@fleet/cli', version: '0.0.0-fake' };
        await upgradeThroughController(node, bytes, expectationFor(bytes, pkg), {
          acceptanceTimeoutMs: 8_000,
        }).catch(() => undefined); // a controller killed mid-request answers nothing
        await waitFor(
          async () => new RegExp(`"step":"${kill.step}"`).test(await journalOf(node)),
          120_000,
          `the journal to record ${kill.step}`,
        );
        // The killed process is gone: no runner holds the lock any more.
        await waitFor(
          async () => (await receiverStatus(node)).busy === null,
          60_000,
          'the lock to be free',
        );

        // The node-local reconciliation, and — where a real build answers — the operator's.
        const after = await receiverStatus(node);
        expect(after.state, JSON.stringify(after, null, 2)).to.equal(kill.state);
        if (kill.next) expect(after.next).to.equal(kill.next);
        expect(after.transaction?.lastStep).to.equal(kill.step);
        if (kill.target === 'real') {
          let shown: FleetRun | undefined;
          // At `staged` the controller was killed: the manager starts it again (RestartSec=5s).
          await waitFor(
            async () => {
              shown = await fleet(['bootstrap', 'status', 'node-01', '--json']);
              return shown.exitCode === 0;
            },
            60_000,
            'fleet bootstrap status through the controller',
          );
          const status = json<{ through: string; status: RuntimeStatusResponse }>(
            shown as FleetRun,
          );
          expect(status.through).to.equal('controller');
          expect(status.status.state).to.equal(kill.state);
          expect(status.status.transaction?.lastStep).to.equal(kill.step);
          expect(status.status.state).to.not.equal('accepted');
        }

        // Rolled back by the operator where a real build answers, node-locally past a liar.
        if (kill.target === 'real') {
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
          async () => (await receiverStatus(node)).transaction?.lastStep === 'end',
          120_000,
          'the rollback to end',
        );
        const final = await receiverStatus(node);
        expect(final.state, JSON.stringify(final, null, 2)).to.equal(kill.final);
        expect(final.observed.live).to.equal(node.artifact.sha256);
        const pointer = await readCurrentPointer(runtimeLayout(node.home, 'linux'));
        expect(pointer.state === 'set' && pointer.buildId).to.equal(node.artifact.sha256);
      } finally {
        await node.dispose();
      }
    });
  }
});
