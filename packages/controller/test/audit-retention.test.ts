/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return --
   Wire answers and audit lines are parsed JSON; the assertions navigate them as plain data. */
/**
 * Reads cannot flush the write trail (contract §15; docs/audit-log.md "Retention"; catalogue
 * "audit retention"): reads are counted per client and interval, retention never prunes a
 * segment holding a write's record the operator has not released, and past its bound of segments
 * the log refuses appends instead of forgetting writes. The load is bounded in count (4,000 reads,
 * 16 at a time, over loopback) and has no timing assertion.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { auditLineHash, orderAuditSegments, verifyAuditSegments } from '@fleet/core';
import { APP } from './support/fixture-registry.js';
import { install } from './support/install.js';
import { startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
/** Tiny segments, so a few dozen records rotate; reads wait for an explicit flush. */
const SMALL = {
  auditSegmentBytes: 1500,
  auditKeepSegments: 1,
  auditMaxSegments: 6,
  auditReadFlushMs: 60_000,
  auditRefusalIntervalMs: 60_000,
};

const segmentsOn = async (node: TestNode) => {
  const dir = join(node.home, STATE);
  const ordered = orderAuditSegments(await readdir(dir));
  return Promise.all(
    ordered.map(async (name) => ({ name, text: await readFile(join(dir, name), 'utf8') })),
  );
};
const records = async (node: TestNode) =>
  (await segmentsOn(node)).flatMap((s) =>
    s.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line)),
  );

/** `rounds` intervals of `batches` × 16 reads, 16 at a time, each interval's counts written. */
async function readFlood(node: TestNode, token: string, rounds: number, batches: number) {
  for (let round = 0; round < rounds; round += 1) {
    for (let batch = 0; batch < batches; batch += 1) {
      const batch = Array.from({ length: 16 }, () =>
        node.call('/v1/export', { token, body: { path: APP } }),
      );
      for (const answer of await Promise.all(batch)) expect(answer.status).to.equal(200);
    }
    await node.controller.runtime.audit.flush();
  }
}

describe('audit retention: reads cannot flush the write trail', function () {
  this.timeout(120_000);
  let node: TestNode;
  let writer: string;
  let reader: string;
  beforeEach(async () => {
    node = await startNode({ limits: SMALL });
    await node.write(APP, 'zero\n');
    writer = await node.issue(['config:install']);
    reader = await node.issue(['config:read']);
  });
  afterEach(async () => node.dispose());

  it('keeps an install’s record through 4,000 reads that rotate the log many times over', async () => {
    const answer = await install(node, writer, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'one\n' },
    ]);
    expect(answer.status, answer.text).to.equal(200);
    const installSeq = answer.body.audit.seq as number;
    await readFlood(node, reader, 25, 10); // 25 intervals × 160 reads

    const all = await records(node);
    expect(all.find((r) => r.seq === installSeq)?.operation).to.equal('install');
    // Reads were counted: one record per interval (160 reads each), not one per read; the
    // read-only segments that rotated out took only such counts with them.
    const counted = all.filter((r) => r.operation === 'export');
    expect(counted.length).to.be.within(1, 25);
    for (const record of counted) expect(record.aggregate.count).to.equal(160);
    // The log rotated, pruned read-only segments, stayed within its bound and verifies.
    const segments = await segmentsOn(node);
    expect(all.filter((r) => r.operation === 'audit.rotate').length).to.be.greaterThan(2);
    expect(segments.length).to.be.at.most(SMALL.auditMaxSegments + 1);
    expect(verifyAuditSegments(segments).ok).to.equal(true);
  });

  it('refuses appends past its bound of segments until the operator releases the writes', async () => {
    // A write in every segment: nothing can be pruned without the operator's say.
    for (let i = 0; i < 40; i += 1) {
      const answer = await install(node, writer, 'fixture', [
        { path: APP, fileId: 'app.conf', content: `v${i}\n` },
      ]);
      if (answer.status !== 200) {
        expect(answer.body.error.code, answer.text).to.equal('AUDIT_UNAVAILABLE');
        expect(answer.body.error.message).to.match(/not released/);
        break;
      }
      expect(i, 'the bound was never reached').to.be.lessThan(39);
    }
    const segments = await segmentsOn(node);
    expect(segments.length).to.equal(SMALL.auditMaxSegments + 1);
    expect(verifyAuditSegments(segments).ok).to.equal(true);
    const first = (await records(node))[0];
    expect(first.seq).to.equal(1); // nothing was pruned

    // The operator's say: everything up to the current head is released.
    const last = segments[segments.length - 1]?.text.trimEnd().split('\n').pop() as string;
    await writeFile(
      join(node.home, STATE, 'audit.release.json'),
      JSON.stringify({
        throughSeq: JSON.parse(last).seq,
        sha256: auditLineHash(last),
        ts: new Date().toISOString(),
      }),
      { mode: 0o600 },
    );
    const again = await install(node, writer, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'released\n' },
    ]);
    expect(again.status, again.text).to.equal(200);
    expect((await segmentsOn(node)).length).to.be.at.most(SMALL.auditKeepSegments + 1);
    expect(verifyAuditSegments(await segmentsOn(node)).ok).to.equal(true);
  });
});
