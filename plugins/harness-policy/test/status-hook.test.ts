import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statusContributionSchema } from '@fleet/core';
import { mergeState, type RunResult } from '../src/reconcile/state.js';
import { reconcilePaths, saveState } from '../src/reconcile/store.js';
import statusHook from '../src/status-hook.js';

const T1 = '2026-05-01T10:00:00.000Z';
const T2 = '2026-05-01T10:30:00.000Z';

function run(now: string, hosts: RunResult['hosts']): RunResult {
  return {
    now,
    canonicalSha: 'c'.repeat(40),
    repoCommit: 'a'.repeat(40),
    mode: 'confirm',
    hosts,
    fleet: hosts.map((h) => h.host),
  };
}

describe('harness-policy plugin: the fleet:status hook', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-status-hook-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('says nothing before any reconcile ran', async () => {
    expect(await statusHook({ env: { XDG_STATE_HOME: dir } })).to.equal(null);
  });

  it("answers the reconcile's offline_pending hosts, first seen and last seen, as core's schema wants", async () => {
    const paths = reconcilePaths({ XDG_STATE_HOME: dir });
    const first = mergeState(null, run(T1, [{ host: 'node-02', state: 'offline_pending' }]));
    await saveState(
      paths,
      mergeState(
        first,
        run(T2, [
          { host: 'node-01', state: 'current' },
          { host: 'node-02', state: 'offline_pending' },
        ]),
      ),
    );
    const answer = await statusHook({ env: { XDG_STATE_HOME: dir } });
    expect(statusContributionSchema.parse(answer)).to.deep.equal({
      source: 'harness reconcile',
      lastRun: T2,
      pending: [{ host: 'node-02', first_seen: T1, last_seen: T2 }],
    });
  });

  it('names a damaged state file, and leaves it where it is', async () => {
    const paths = reconcilePaths({ XDG_STATE_HOME: dir });
    await saveState(paths, mergeState(null, run(T1, [{ host: 'node-01', state: 'current' }])));
    await writeFile(paths.state, '{"schema": ');
    const answer = statusContributionSchema.parse(
      await statusHook({ env: { XDG_STATE_HOME: dir } }),
    );
    expect(answer)
      .to.have.property('problem')
      .that.match(/^harness reconcile state: /);
    expect(await statusHook({ env: { XDG_STATE_HOME: dir } })).to.deep.equal(answer);
  });
});
