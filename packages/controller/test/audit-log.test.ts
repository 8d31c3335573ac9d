/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return --
   Wire answers and audit lines are parsed JSON; the assertions navigate them as plain data. */
/**
 * The audit log fails closed and is verified whole (contract §5, §15; docs/audit-log.md;
 * catalogue 1, 8, 25–27, 39): a broken chain at start refuses writes (reads still work) and
 * health says where; a log replaced under a running controller is caught before the next append
 * and at the next start; the log rotates into chained segments and a removed segment is caught;
 * refusals without an operation id are counted, reads are audited in groups; an id refused before
 * its journal opened cannot run later (A→B→A).
 */
import { copyFile, readFile, readdir, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { orderAuditSegments, verifyAuditSegments } from '@fleet/core';
import { APP } from './support/fixture-registry.js';
import { install, installBody } from './support/install.js';
import { newId, startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
const QUIET = { auditReadFlushMs: 60_000, auditRefusalIntervalMs: 60_000 };

async function health(node: TestNode) {
  const answer = await node.call('/v1/health', { token: await node.issue(['config:read']) });
  expect(answer.status, answer.text).to.equal(200);
  return answer.body as {
    status: string;
    checks: { name: string; status: string; detail: string }[];
  };
}

async function auditCheck(node: TestNode): Promise<{ status: string; detail: string }> {
  return (await health(node)).checks.find((c) => c.name === 'audit-log') as {
    status: string;
    detail: string;
  };
}

/** `count` successful exports, their records written (one group). */
/** `count` reads, each written as its own record (reads are counted per interval: one flush each). */
async function reads(node: TestNode, token: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const answer = await node.call('/v1/export', { token, body: { path: APP } });
    expect(answer.status, answer.text).to.equal(200);
    await node.controller.runtime.audit.flush();
  }
}

const segmentsOn = async (node: TestNode) => {
  const dir = join(node.home, STATE);
  const ordered = orderAuditSegments(await readdir(dir));
  return Promise.all(
    ordered.map(async (name) => ({ name, text: await readFile(join(dir, name), 'utf8') })),
  );
};

describe('audit log: fails closed, verified whole', () => {
  let node: TestNode;
  let writer: string;
  let reader: string;
  const logPath = () => join(node.home, STATE, 'audit.jsonl');
  const lines = async () => (await readFile(logPath(), 'utf8')).trimEnd().split('\n');

  beforeEach(async () => {
    node = await startNode({ limits: QUIET });
    await node.write(APP, 'zero\n');
    writer = await node.issue(['config:install']);
    reader = await node.issue(['config:read']);
    await install(node, writer, 'fixture', [{ path: APP, fileId: 'app.conf', content: 'one\n' }]);
    await reads(node, reader, 3);
    await install(node, writer, 'fixture', [{ path: APP, fileId: 'app.conf', content: 'two\n' }]);
    expect(await lines()).to.have.length(5);
  });
  afterEach(async () => node.dispose());

  describe('start-up verifies the whole chain', () => {
    const damage: [string, (all: string[]) => string, string][] = [
      [
        'an edited record',
        (all) =>
          `${all.map((l, i) => (i === 1 ? l.replace('"outcome":"ok"', '"outcome":"denied"') : l)).join('\n')}\n`,
        'audit.jsonl line 2: edited',
      ],
      ['a removed record', (all) => `${all.filter((_, i) => i !== 2).join('\n')}\n`, 'removed'],
      [
        'two records swapped',
        (all) => `${[all[0], all[2], all[1], all[3], all[4]].join('\n')}\n`,
        'reordered',
      ],
      [
        'a NUL hole',
        (all) =>
          `${all.slice(0, 2).join('\n')}\n${'\u0000'.repeat(300)}${all.slice(2).join('\n')}\n`,
        'audit.jsonl line 3: malformed: line 3 holds NUL bytes (a hole)',
      ],
      [
        'a record cut mid-file',
        (all) => `${all.map((l, i) => (i === 1 ? l.slice(0, 40) : l)).join('\n')}\n`,
        'audit.jsonl line 2: malformed',
      ],
      ['the first records cut away', (all) => `${all.slice(2).join('\n')}\n`, 'removed'],
    ];
    for (const [what, change, where] of damage) {
      it(`${what}: writes refused (503 AUDIT_UNAVAILABLE), reads still work, health says where`, async () => {
        await node.controller.close();
        await writeFile(logPath(), change(await lines()));
        const damaged = await readFile(logPath(), 'utf8');
        await node.restart();
        const check = await auditCheck(node);
        expect(check.status).to.equal('failing');
        expect(check.detail).to.contain(where);
        expect(check.detail).to.contain('writes refused');
        const refused = await install(node, writer, 'fixture', [
          { path: APP, fileId: 'app.conf', content: 'three\n' },
        ]);
        expect([refused.status, refused.body.error.code]).to.deep.equal([503, 'AUDIT_UNAVAILABLE']);
        expect((await node.read(APP))?.toString()).to.equal('two\n'); // nothing was done
        const read = await node.call('/v1/export', { token: reader, body: { path: APP } });
        expect(read.status).to.equal(200);
        await node.controller.runtime.audit.flush();
        expect(await readFile(logPath(), 'utf8')).to.equal(damaged); // the log is left as found
      });
    }

    it('a broken chain with an interrupted operation left: the controller still starts, the journal waits', async () => {
      await node.controller.close();
      const all = await lines();
      await writeFile(logPath(), `${all.filter((_, i) => i !== 1).join('\n')}\n`);
      const id = newId();
      const journal = join(node.home, STATE, 'journal', `${id}.jsonl`);
      const begin = {
        event: 'begin',
        operationId: id,
        operation: 'install',
        domain: 'fixture',
        client: null,
        paths: [APP],
        startedAt: new Date().toISOString(),
      };
      await writeFile(journal, `${JSON.stringify(begin)}\n`, { mode: 0o600 });
      await node.restart();
      expect((await auditCheck(node)).status).to.equal('failing');
      const recovery = (await health(node)).checks.find((c) => c.name === 'recovery');
      expect(recovery?.detail).to.contain('1 interrupted operation(s) left journaled');
      expect(await readFile(journal, 'utf8')).to.contain(id);
      expect(
        (await node.call('/v1/export', { token: reader, body: { path: APP } })).status,
      ).to.equal(200);
    });

    it('a torn last line is moved aside with a recovery record, and writes go on', async () => {
      await node.controller.close();
      await writeFile(logPath(), `${(await lines()).join('\n')}\n{"seq":6,"ts":"20`);
      await node.restart();
      expect((await auditCheck(node)).status).to.equal('ok');
      const torn = (await readdir(join(node.home, STATE))).filter((n) =>
        n.startsWith('audit.jsonl.torn-'),
      );
      expect(torn).to.have.length(1);
      const ok = await install(node, writer, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'three\n' },
      ]);
      expect(ok.status, ok.text).to.equal(200);
      const result = verifyAuditSegments(await segmentsOn(node));
      expect(result.ok, JSON.stringify(result.problems)).to.equal(true);
    });

    it('a log cut back to an older, consistent copy is caught by the head recorded at close', async () => {
      const older = `${(await lines()).slice(0, 3).join('\n')}\n`;
      await node.controller.close();
      await writeFile(logPath(), older);
      await node.restart();
      const check = await auditCheck(node);
      expect(check.status).to.equal('failing');
      expect(check.detail).to.contain('before the trusted head (seq 5)');
    });
  });

  describe('a log replaced under the running controller', () => {
    it('is caught before the next append: the install is undone and answered 503', async () => {
      const copy = `${logPath()}.copy`;
      await copyFile(logPath(), copy);
      await rename(copy, logPath()); // same content, another file
      const answer = await install(node, writer, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'three\n' },
      ]);
      expect([answer.status, answer.body.error.code]).to.deep.equal([503, 'AUDIT_UNAVAILABLE']);
      expect((await node.read(APP))?.toString()).to.equal('two\n');
      const check = await auditCheck(node);
      expect(check.detail).to.contain('audit.jsonl was replaced under the controller');
      expect((await health(node)).status).to.equal('degraded');
      expect(
        (await node.call('/v1/export', { token: reader, body: { path: APP } })).status,
      ).to.equal(200);
    });

    it('a replacement that lost records is still refused after a restart (the head was kept)', async () => {
      const older = `${(await lines()).slice(0, 2).join('\n')}\n`;
      await writeFile(`${logPath()}.older`, older);
      await rename(`${logPath()}.older`, logPath());
      await reads(node, reader, 1); // the next group finds it
      await node.restart();
      const check = await auditCheck(node);
      expect(check.status).to.equal('failing');
      expect(check.detail).to.match(/before the trusted head \(seq 5\)/);
      expect(await readFile(logPath(), 'utf8')).to.equal(older);
    });

    it('a truncated log is caught the same way (never written after a cut it did not make)', async () => {
      await truncate(logPath(), 10);
      await reads(node, reader, 1);
      expect((await auditCheck(node)).detail).to.contain('changed under the controller');
      expect(await readFile(logPath(), 'utf8')).to.have.length(10);
    });
  });

  describe('refusals and reads', () => {
    it('a flood of 401s is one counted record per address, not one per request', async () => {
      const before = (await lines()).length;
      for (let batch = 0; batch < 5; batch += 1) {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            node.call('/v1/install', { token: `flt_${batch}_${i}_bogus`, body: {} }),
          ),
        );
      }
      await node.call('/v1/nope', { token: reader });
      await node.call('/v1/install', { token: reader, body: {} }); // a valid token, no scope
      await node.controller.runtime.audit.flush();
      const added = (await lines()).slice(before).map((line) => JSON.parse(line));
      expect(added.map((r) => [r.operation, r.code, r.aggregate?.count])).to.deep.equal([
        ['install', 'AUTH_INVALID', 100],
        ['unknown', 'OP_UNKNOWN', 1],
        ['install', 'SCOPE_DENIED', 1],
      ]);
      expect(added[0]).to.include({ client: null, outcome: 'denied', operationId: null });
      expect(added[0].aggregate.remote).to.equal('127.0.0.1');
      // A refusal after the token was accepted is counted per client, not per address.
      expect(added[2].client).to.be.a('string');
      expect(added[2].aggregate.remote).to.equal(null);
    });

    it('audits every successful read (export, inventory, snapshot, probe, versions), not identity or health', async () => {
      const before = (await lines()).length;
      const versions = await node.issue(['versions:read']);
      await node.call('/v1/identity', { token: reader });
      await node.call('/v1/health', { token: reader });
      await node.call('/v1/export', { token: reader, body: { path: APP } });
      await node.call('/v1/inventory', { token: reader });
      await node.call('/v1/snapshot', {
        token: reader,
        body: { files: [{ domain: 'fixture', path: APP }], backups: false },
      });
      await node.call('/v1/probe', {
        token: reader,
        body: { prober: 'fixture.facts', parameters: {} },
      });
      await node.call('/v1/versions', { token: versions, body: { tools: [] } });
      expect(await lines()).to.have.length(before); // written after the answers, in a group
      await node.controller.runtime.audit.flush();
      const added = (await lines()).slice(before).map((line) => JSON.parse(line));
      expect(added.map((r) => [r.operation, r.outcome])).to.deep.equal([
        ['export', 'ok'],
        ['inventory', 'ok'],
        ['snapshot', 'ok'],
        ['probe', 'ok'],
        ['versions', 'ok'],
      ]);
      expect(added[0].paths).to.deep.equal([APP]);
      expect(added.map((r) => r.ts)).to.satisfy((ts: string[]) => ts.every((t) => t === ts[0]));
    });

    it("writes the reads waiting before a write's record, in order, with the write's fsync", async () => {
      const before = (await lines()).length;
      await node.call('/v1/export', { token: reader, body: { path: APP } });
      const answer = await install(node, writer, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'three\n' },
      ]);
      const added = (await lines()).slice(before).map((line) => JSON.parse(line));
      expect(added.map((r) => r.operation)).to.deep.equal(['export', 'install']);
      expect(answer.body.audit.seq).to.equal(added[1].seq);
    });

    it('carries the durable audit head in every authenticated answer, never in an unauthenticated one', async () => {
      const answer = await node.call('/v1/identity', { token: reader });
      const last = JSON.parse((await lines()).pop() as string);
      expect(answer.headers['fleet-audit-head']).to.match(new RegExp(`^${last.seq}:[0-9a-f]{64}$`));
      const anonymous = await node.call('/v1/identity', {});
      expect(anonymous.headers['fleet-audit-head']).to.equal(undefined);
    });
  });

  describe('operation ids are claimed whatever the outcome (A→B→A)', () => {
    it('a request refused LOCKED and replayed byte for byte later is answered with its refusal, never run', async () => {
      const body = await installBody(node, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'from A\n' },
      ]);
      const raw = JSON.stringify(body);
      const b = newId();
      node.controller.runtime.locks.acquire([APP], b); // B holds the file
      const first = await node.call('/v1/install', { token: writer, raw });
      expect([first.status, first.body.error.code]).to.deep.equal([423, 'LOCKED']);
      node.controller.runtime.locks.release(b); // B is done
      const again = await node.call('/v1/install', { token: writer, raw });
      expect([again.status, again.body.error.code]).to.deep.equal([423, 'LOCKED']);
      expect((await node.read(APP))?.toString()).to.equal('two\n');
      const records = (await lines()).map((line) => JSON.parse(line));
      const mine = records.filter((r) => r.operationId === body.operationId);
      expect(mine.map((r) => [r.outcome, r.code])).to.deep.equal([
        ['failed', 'LOCKED'],
        ['replayed', 'LOCKED'],
      ]);
      const other = await node.call('/v1/install', {
        token: writer,
        body: { ...body, files: [{ ...body.files[0], content: 'other\n' }] },
      });
      expect(other.body.error.code).to.equal('REPLAY_REJECTED');
    });
  });

  it('200,000-deep JSON in a z.json() field is 400 BAD_REQUEST, and the controller goes on', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const answer = await node.call('/v1/probe', {
      token: reader,
      raw: `{"prober":"fixture.facts","parameters":{"x":${deep}}}`,
    });
    expect([answer.status, answer.body.error.code]).to.deep.equal([400, 'BAD_REQUEST']);
    expect(answer.body.error.message).to.contain('deeper than 256');
    expect((await node.call('/v1/identity', { token: reader })).status).to.equal(200);
  });
});

describe('audit log: rotation into chained segments', () => {
  let node: TestNode;
  let reader: string;
  const dir = () => join(node.home, STATE);

  beforeEach(async () => {
    node = await startNode({
      limits: { ...QUIET, auditSegmentBytes: 1200, auditKeepSegments: 2 },
    });
    await node.write(APP, 'zero\n');
    reader = await node.issue(['config:read']);
    for (let i = 0; i < 12; i += 1) await reads(node, reader, 2);
  });
  afterEach(async () => node.dispose());

  it('rotates at the bound, keeps two closed segments, and the kept log verifies from where it starts', async () => {
    const segments = await segmentsOn(node);
    expect(segments.map((s) => s.name.replace(/\d{12}/, 'N'))).to.deep.equal([
      'audit.N.jsonl',
      'audit.N.jsonl',
      'audit.jsonl',
    ]);
    const result = verifyAuditSegments(segments);
    expect(result.ok, JSON.stringify(result.problems)).to.equal(true);
    expect(result.firstSeq).to.be.greaterThan(1); // older segments were pruned
    const rotation = JSON.parse((segments[2]?.text ?? '').split('\n')[0] as string);
    expect(rotation.operation).to.equal('audit.rotate');
    expect(rotation.segment.previous).to.equal(segments[1]?.name);
    expect(rotation.segment.retainedFromSeq).to.equal(result.firstSeq);
    // The route answers every kept segment, oldest first, as one sequence of lines.
    const answer = await node.call('/v1/audit', { token: reader, body: { limit: 5000 } });
    const all = segments.flatMap((s) => s.text.trimEnd().split('\n'));
    expect(answer.body.lines).to.deep.equal(all);
    // A restart verifies the whole segmented chain and writes go on.
    await node.restart();
    expect((await auditCheck(node)).status).to.equal('ok');
  });

  it('a removed segment is caught at the next start', async () => {
    const [first] = await segmentsOn(node);
    await node.controller.close();
    await rm(join(dir(), first?.name as string));
    await node.restart();
    const check = await auditCheck(node);
    expect(check.status).to.equal('failing');
    expect(check.detail).to.match(/removed: records [\d–]+ missing/);
  });

  it('a closed segment replaced by another is caught at the next start', async () => {
    const [first, second] = await segmentsOn(node);
    await node.controller.close();
    const lines = (first?.text ?? '').trimEnd().split('\n');
    lines[0] = (lines[0] as string).replace('"outcome":"ok"', '"outcome":"failed"');
    await writeFile(join(dir(), first?.name as string), `${lines.join('\n')}\n`);
    await node.restart();
    const check = await auditCheck(node);
    expect(check.status).to.equal('failing');
    expect(check.detail).to.contain(`${first?.name as string} line 1: edited`);
    expect(second).to.not.equal(undefined);
  });

  it('an active segment removed after a rotation is caught (not taken for a fresh log)', async () => {
    await node.controller.close();
    await rm(join(dir(), 'audit.jsonl'));
    await rm(join(dir(), 'audit.head.json'));
    await node.restart();
    const check = await auditCheck(node);
    expect(check.status).to.equal('failing');
    expect(check.detail).to.contain('writes refused');
    const messages = verifyAuditSegments(await segmentsOn(node)).problems.map((p) => p.message);
    expect(messages.join('\n')).to.contain('the active segment audit.jsonl is missing');
  });
});

describe('controller binding', () => {
  it('refuses a non-loopback bind without TLS, naming the fix', async () => {
    const { createController } = await import('../src/index.js');
    const node = await startNode();
    try {
      let refused: { code?: string; message?: string; suggestions?: string[] } | undefined;
      await createController({
        home: node.home,
        nodeId: 'node-01',
        registry: node.controller.runtime.registry,
        bind: '0.0.0.0',
      }).catch((error: unknown) => {
        refused = error as typeof refused;
      });
      expect(refused?.code).to.equal('USAGE');
      expect(refused?.message).to.contain('plain HTTP');
      expect(refused?.suggestions?.join(' ')).to.contain('--tls-cert');
    } finally {
      await node.dispose();
    }
  });

  it('keeps the Host check for a wildcard bind: this machine’s addresses and name, nothing else', async () => {
    const { hostsFor } = await import('../src/controller.js');
    const hosts = hostsFor('0.0.0.0', 7701, ['node-01.lan:7701'], {
      hostname: 'node-01',
      addresses: ['192.168.1.5', 'fe80::1', '127.0.0.1'],
    });
    for (const ok of [
      '192.168.1.5:7701',
      '[fe80::1]:7701',
      'node-01:7701',
      'node-01.lan:7701',
      'localhost:7701',
    ]) {
      expect(hosts.has(ok), ok).to.equal(true);
    }
    for (const bad of ['evil.example:7701', '192.168.1.5:80', 'attacker.node-01:7701']) {
      expect(hosts.has(bad), bad).to.equal(false);
    }
  });
});

describe('a runtime stage whose audit record cannot be written', () => {
  it('is closed as failed (abandonStaged), so it is neither left open nor blocks the next stage', async () => {
    const { mkdtemp, mkdir } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { abandonStaged } = await import('../src/lifecycle/stage.js');
    const { RuntimeJournal, lastTransaction, runtimeJournalPath } =
      await import('../src/generations/journal.js');
    const { JournalText, BUILD_A, BUILD_B } = await import('./support/runtime.js');
    const home = await mkdtemp(join(tmpdir(), 'fleet-abandon-'));
    try {
      const staged = JournalText.upgrade(BUILD_B, BUILD_A, 'staged');
      await mkdir(join(home, STATE, 'journal'), { recursive: true, mode: 0o700 });
      await writeFile(runtimeJournalPath(home), staged.text(), { mode: 0o600 });
      await abandonStaged(home, staged.txn, 'the audit record could not be written');
      const txn = lastTransaction(await new RuntimeJournal(home).readTrusted());
      expect(txn?.ended).to.equal(true);
      expect(txn?.find('failed')?.data).to.include({ during: 'stage', code: 'AUDIT_UNAVAILABLE' });
      // Another transaction's id, or one already ended: left as it is.
      const before = await readFile(runtimeJournalPath(home), 'utf8');
      await abandonStaged(home, staged.txn, 'again');
      expect(await readFile(runtimeJournalPath(home), 'utf8')).to.equal(before);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
