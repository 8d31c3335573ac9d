/**
 * Drift's one request per host (contract §14) carries the runtime journal summary when it asks
 * (`POST /v1/snapshot` with `runtime: true`): the same summary `GET /v1/summary` answers, so an
 * open or failed runtime transaction is never `current` without a second request.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { expect } from 'chai';
import { nodeSummaryResponseSchema, snapshotResponseSchema } from '@fleet/core/node';
import { runtimeJournalPath } from '../src/generations/journal.js';
import { APP } from './support/fixture-registry.js';
import { BUILD_A, BUILD_B, JournalText } from './support/runtime.js';
import { startNode, type TestNode } from './support/node.js';

describe('snapshot with the runtime journal summary', () => {
  let node: TestNode;
  let read: string;
  before(async () => {
    node = await startNode();
    read = await node.issue(['config:read']);
  });
  after(() => node.dispose());

  const snapshot = (runtime: boolean) =>
    node.call('/v1/snapshot', {
      token: read,
      body: {
        files: [{ domain: 'fixture', path: APP }],
        backups: false,
        ...(runtime ? { runtime: true } : {}),
      },
    });

  it('answers the summary only when asked, as /v1/summary does', async () => {
    const without = await snapshot(false);
    expect(without.status, without.text).to.equal(200);
    expect(without.body).to.not.have.property('runtime');
    const asked = await snapshot(true);
    expect(asked.status, asked.text).to.equal(200);
    expect(snapshotResponseSchema.parse(asked.body).runtime).to.deep.equal({
      journal: 'empty',
      busy: false,
      attention: 'none',
      transaction: null,
    });
  });

  it('says recovery-required for an activated upgrade nobody works on', async () => {
    const path = runtimeJournalPath(node.home);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, JournalText.upgrade(BUILD_B, BUILD_A, 'supervisor-restarted').text(), {
      mode: 0o600,
    });
    const asked = await snapshot(true);
    expect(asked.status, asked.text).to.equal(200);
    const carried = snapshotResponseSchema.parse(asked.body).runtime;
    expect(carried).to.include({ attention: 'recovery-required', busy: false });
    const summary = await node.call('/v1/summary', { token: read });
    expect(nodeSummaryResponseSchema.parse(summary.body).runtime).to.deep.equal(carried);
  });
});
