/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/** The audit log on a real node (contract §5, §15; catalogue A1, C27, E38). */
import { appendFile, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { verifyAuditChain } from '@fleet/core';
import { APP } from './support/fixture-registry.js';
import { install } from './support/install.js';
import { startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';

describe('audit log', () => {
  let node: TestNode;
  let token: string;
  const auditPath = () => join(node.home, STATE, 'audit.jsonl');
  const lines = async () => (await readFile(auditPath(), 'utf8')).trimEnd().split('\n');

  beforeEach(async () => {
    node = await startNode({
      limits: { auditReadFlushMs: 60_000, auditRefusalIntervalMs: 60_000 },
    });
    token = await node.issue(['config:install', 'config:read']);
    await install(node, token, 'fixture', [{ path: APP, fileId: 'app.conf', content: 'one\n' }]);
    await node.call('/v1/identity', { token: 'flt_0000000000000000_xxx' }); // denied (counted)
    await node.call('/v1/export', { token, body: { path: '~/.ssh/id_rsa' } }); // refused (a read)
    // The install's record is written after the read waiting before it, in one group.
    await install(node, token, 'fixture', [{ path: APP, fileId: 'app.conf', content: 'two\n' }]);
    await node.controller.runtime.audit.flush(); // and the counted refusal after both
  });
  afterEach(async () => node.dispose());

  it('is a valid hash chain of one-object lines, mode 0600, whose head the last receipt names', async () => {
    const text = await readFile(auditPath(), 'utf8');
    const result = verifyAuditChain(text);
    expect(result.ok, JSON.stringify(result.problems)).to.equal(true);
    expect(result.entries).to.equal(4);
    const records = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records.map((r) => [r.operation, r.outcome, r.code])).to.deep.equal([
      ['install', 'ok', null],
      ['export', 'failed', 'PATH_OUTSIDE_ROOT'],
      ['install', 'ok', null],
      ['identity', 'denied', 'AUTH_INVALID'],
    ]);
    expect(records[3].client).to.equal(null);
    expect(records[3].aggregate).to.include({ count: 1, remote: '127.0.0.1' });
    expect((await stat(auditPath())).mode & 0o777).to.equal(0o600);
    const last = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'three\n' },
    ]);
    const head = last.body.audit;
    expect(verifyAuditChain(await readFile(auditPath(), 'utf8'), { head }).ok).to.equal(true);
  });

  it('detects an edited entry', async () => {
    const all = await lines();
    all[1] = (all[1] as string).replace('"outcome":"failed"', '"outcome":"ok"');
    const result = verifyAuditChain(`${all.join('\n')}\n`);
    expect(result.ok).to.equal(false);
    expect(result.problems[0]).to.include({ kind: 'edited', line: 2 });
  });

  it('detects a deleted entry', async () => {
    const all = await lines();
    all.splice(2, 1);
    expect(verifyAuditChain(`${all.join('\n')}\n`).problems.map((p) => p.kind)).to.include(
      'removed',
    );
  });

  it('detects reordered entries', async () => {
    const all = await lines();
    [all[1], all[2]] = [all[2] as string, all[1] as string];
    expect(verifyAuditChain(`${all.join('\n')}\n`).problems.map((p) => p.kind)).to.include(
      'reordered',
    );
  });

  it('detects an edit of the last entry against the head a receipt carries', async () => {
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'four\n' },
    ]);
    const all = await lines();
    all[all.length - 1] = (all[all.length - 1] as string).replace(
      '"outcome":"ok"',
      '"outcome":"unchanged"',
    );
    expect(verifyAuditChain(`${all.join('\n')}\n`, { head: answer.body.audit }).ok).to.equal(false);
  });

  it('moves a torn last line aside at start, appends a recovery record, and stays verifiable', async () => {
    await node.controller.close();
    await appendFile(auditPath(), '{"seq":5,"ts":"2026-');
    await node.restart();
    const torn = (await readdir(join(node.home, STATE))).filter((name) =>
      name.startsWith('audit.jsonl.torn-'),
    );
    expect(torn).to.have.length(1);
    expect(await readFile(join(node.home, STATE, torn[0] as string), 'utf8')).to.equal(
      '{"seq":5,"ts":"2026-',
    );
    const text = await readFile(auditPath(), 'utf8');
    expect(verifyAuditChain(text).ok).to.equal(true);
    const last = JSON.parse((await lines()).pop() as string);
    expect(last).to.include({ operation: 'audit.recover', outcome: 'recovered' });
    expect(last.detail).to.contain(torn[0]);
  });

  it('keeps one record per line whatever a path contains (no log injection)', async () => {
    const forged = '~/x\n{"operation":"install","outcome":"ok"}';
    await node.call('/v1/export', { token, body: { path: forged } });
    await node.call('/v1/export', { token, body: { path: '~/\u001b[2J' } });
    await node.controller.runtime.audit.flush();
    const all = await lines();
    for (const line of all) expect(() => JSON.parse(line)).to.not.throw();
    // Both refused by the body's schema, before any id: one counted record for the two.
    expect(all).to.have.length(5);
    expect(JSON.parse(all[4] as string).aggregate.count).to.equal(2);
    expect(verifyAuditChain(`${all.join('\n')}\n`).ok).to.equal(true);
  });

  it('refuses to start a second controller on the same home', async () => {
    let refused: unknown;
    const { createController } = await import('../src/index.js');
    await createController({
      home: node.home,
      nodeId: 'twin',
      registry: node.controller.runtime.registry,
    }).catch((error: unknown) => {
      refused = error;
    });
    expect((refused as { code?: string } | undefined)?.code).to.equal('LOCKED');
  });
});
