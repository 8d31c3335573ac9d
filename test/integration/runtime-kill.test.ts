/**
 * Kill -9 at every journal step of an upgrade (contract §15, catalogue 53): afterwards `status`
 * reconciles the journal with what runs, and `rollback` restores the prior generation, verified.
 * The failpoint `runtime.journal.<step>:kill` SIGKILLs the process that has just made that step
 * durable — the controller for `begin`/`staged`, the detached runner for the rest.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { readCurrentPointer, runtimeLayout, type RuntimeStatusResponse } from '@fleet/core';
import { fakeRuntimeArtifact } from '@fleet/testkit';
import { packedRuntimeArtifact, repackedArtifact } from '../src/artifact.js';
import { tempDir, waitFor } from '../src/fleet.js';
import {
  expectationFor,
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
  /** What status says after `rollback`. */
  readonly final: RuntimeStatusResponse['state'];
}

const CASES: readonly KillCase[] = [
  { step: 'begin', target: 'real', state: 'in-progress', next: 'abort', final: 'idle' },
  { step: 'staged', target: 'real', state: 'in-progress', next: 'abort', final: 'idle' },
  {
    step: 'activated',
    target: 'real',
    state: 'in-progress',
    next: 'rollback',
    final: 'rolled-back',
  },
  { step: 'supervisor-restarted', target: 'real', state: 'in-progress', final: 'rolled-back' },
  { step: 'accepted', target: 'real', state: 'accepted', final: 'rolled-back' },
  { step: 'end', target: 'real', state: 'accepted', final: 'rolled-back' },
  { step: 'failed', target: 'liar', state: 'in-progress', next: 'rollback', final: 'rolled-back' },
  { step: 'rolled-back', target: 'liar', state: 'rolled-back', final: 'rolled-back' },
];

const journalOf = (node: RuntimeNode) =>
  readFile(join(node.home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8').catch(() => '');

describe('kill -9 at every journal step of an upgrade: status reconciles, rollback restores', function () {
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
    it(`after a kill at "${kill.step}"`, async () => {
      const node = await startRuntimeNode({
        environment: { FLEET_FAILPOINT: `runtime.journal.${kill.step}:kill` },
      });
      try {
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

        const after = await receiverStatus(node);
        expect(after.state, JSON.stringify(after, null, 2)).to.equal(kill.state);
        if (kill.next) expect(after.next).to.equal(kill.next);
        expect(after.transaction?.lastStep).to.equal(kill.step);

        const rollback = await runRunner(node, 'rollback', `kill-${kill.step}`);
        expect(rollback.code, rollback.output).to.equal(0);
        // begin/staged: nothing was activated; the supervisor restarts the killed controller.
        await waitFor(
          async () => (await node.client.identity().catch(() => null)) !== null,
          90_000,
          'the prior runtime to answer',
        );
        const final = await receiverStatus(node);
        expect(final.state, JSON.stringify(final, null, 2)).to.equal(kill.final);
        expect(final.observed.live).to.equal(node.artifact.sha256);
        const pointer = await readCurrentPointer(runtimeLayout(node.home, 'linux'));
        expect(pointer.state === 'set' && pointer.buildId).to.equal(node.artifact.sha256);
        expect(final.transaction?.lastStep).to.equal('end');
      } finally {
        await node.dispose();
      }
    });
  }
});
