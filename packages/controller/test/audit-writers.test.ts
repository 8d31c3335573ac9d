/**
 * One chain, two writers (docs/audit-log.md, "Writers"; catalogue 70a): the SSH recovery receiver
 * appends its records (`appendAuditRecords`) to the log a running controller writes. Both hold
 * the append lock, and the controller adopts the receiver's records — only whole records that go
 * on from its head, from an `ssh:` caller; anything else appended under it still refuses writes.
 */
import { spawn } from 'node:child_process';
import { appendFile, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { AUDIT_GENESIS, auditLineHash, orderAuditSegments, verifyAuditSegments } from '@fleet/core';
import { adoptAppended } from '../src/audit/adopt.js';
import { appendAuditRecords } from '../src/audit/append.js';
import { systemClock } from '../src/context.js';
import { APP } from './support/fixture-registry.js';
import { install } from './support/install.js';
import { startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
const QUIET = { auditReadFlushMs: 60_000, auditRefusalIntervalMs: 60_000 };
const APPEND_MODULE = fileURLToPath(new URL('../src/audit/append.js', import.meta.url));
const CONTEXT_MODULE = fileURLToPath(new URL('../src/context.js', import.meta.url));

function receiverRecord(detail: string, client = 'ssh:forced-command') {
  return {
    operationId: null,
    client,
    operation: 'runtime-stage',
    paths: [],
    files: [],
    outcome: 'ok' as const,
    code: null,
    detail,
  };
}

/** A record line as a writer would chain it after `prev` at `seq`. */
function line(seq: number, prev: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    seq,
    ts: '2026-01-01T00:00:00.000Z',
    prev,
    ...receiverRecord(`record ${seq}`),
    ...fields,
  });
}

async function segments(home: string) {
  const dir = join(home, STATE);
  const names = orderAuditSegments(await readdir(dir));
  return Promise.all(
    names.map(async (name) => ({ name, text: await readFile(join(dir, name), 'utf8') })),
  );
}

async function records(home: string): Promise<Record<string, unknown>[]> {
  return (await segments(home)).flatMap((segment) =>
    segment.text
      .trimEnd()
      .split('\n')
      .filter((text) => text !== '')
      .map((text) => JSON.parse(text) as Record<string, unknown>),
  );
}

/** `count` receiver appends from a process of its own (what `fleet bootstrap receive` is). */
function receiverProcess(home: string, count: number): Promise<number> {
  const script = `
    const { appendAuditRecords } = await import(${JSON.stringify(APPEND_MODULE)});
    const { systemClock } = await import(${JSON.stringify(CONTEXT_MODULE)});
    for (let i = 0; i < ${count}; i += 1) {
      await appendAuditRecords(${JSON.stringify(home)}, [${JSON.stringify(receiverRecord('from the receiver'))}], systemClock);
    }`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? -1));
  });
}

describe('audit log: the SSH receiver and the controller append to one chain', function () {
  this.timeout(60_000);
  let node: TestNode;
  let writer: string;

  beforeEach(async () => {
    node = await startNode({ limits: QUIET });
    await node.write(APP, 'zero\n');
    writer = await node.issue(['config:install']);
  });
  afterEach(async () => node.dispose());

  it('a receiver process appending while installs are audited: one intact chain, every record kept', async () => {
    const installs = (async () => {
      for (let i = 0; i < 30; i += 1) {
        const answer = await install(node, writer, 'fixture', [
          { path: APP, fileId: 'app.conf', content: `v${i}\n` },
        ]);
        expect(answer.status, answer.text).to.equal(200);
      }
    })();
    const [, exitCode] = await Promise.all([installs, receiverProcess(node.home, 30)]);
    expect(exitCode).to.equal(0);
    // The controller goes on writing after the receiver finished: adopted, not refused.
    const last = await install(node, writer, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'last\n' },
    ]);
    expect(last.status, last.text).to.equal(200);
    expect(node.controller.runtime.audit.problem()).to.equal(undefined);

    const all = await records(node.home);
    expect(all.filter((r) => r['client'] === 'ssh:forced-command')).to.have.length(30);
    expect(all.filter((r) => r['operation'] === 'install' && r['outcome'] === 'ok')).to.have.length(
      31,
    );
    expect(verifyAuditSegments(await segments(node.home)).ok).to.equal(true);
    expect(node.controller.runtime.audit.head().seq).to.equal(all.length);
    // The next start verifies the whole chain, the receiver's records included.
    await node.restart();
    expect(node.controller.runtime.audit.problem()).to.equal(undefined);
  });

  it('a receiver append while no controller runs is verified by the next start', async () => {
    await node.controller.close();
    const head = await appendAuditRecords(
      node.home,
      [receiverRecord('while stopped', 'ssh:SHA256:abc')],
      systemClock,
    );
    await node.restart();
    expect(node.controller.runtime.audit.problem()).to.equal(undefined);
    expect(node.controller.runtime.audit.head().seq).to.be.greaterThanOrEqual(head.seq);
  });

  it('a record appended by anything but the receiver still refuses writes (changed under the controller)', async () => {
    const first = await install(node, writer, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'one\n' },
    ]);
    expect(first.status).to.equal(200);
    const { seq, sha256 } = node.controller.runtime.audit.head();
    // Well chained, but not a receiver's: a token's client name.
    await appendFile(
      join(node.home, STATE, 'audit.jsonl'),
      `${line(seq + 1, sha256, { client: 'operator' })}\n`,
    );
    const refused = await install(node, writer, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'two\n' },
    ]);
    expect(refused.status, refused.text).to.equal(503);
    expect(node.controller.runtime.audit.problem()).to.match(
      /changed under the controller .*not the SSH receiver/,
    );
  });
});

describe('adoptAppended (what the controller takes in from the receiver)', () => {
  const head = { seq: 7, hash: AUDIT_GENESIS.replace(/0/g, 'a') };
  const one = line(8, head.hash);
  const two = line(9, auditLineHash(one));
  const cases: [string, string, RegExp | number][] = [
    ['two chained receiver records', `${one}\n${two}\n`, 2],
    ['a partial record', `${one}\n${two}`, /partial record/],
    ['a record that skips a seq', `${line(9, head.hash)}\n`, /does not follow seq 7/],
    ['a record that does not follow the head', `${line(8, AUDIT_GENESIS)}\n`, /does not follow/],
    ['a token client', `${line(8, head.hash, { client: 'legacy' })}\n`, /not the SSH receiver/],
    ['no client', `${line(8, head.hash, { client: null })}\n`, /not the SSH receiver/],
    ['a rotation', `${line(8, head.hash, { segment: {} })}\n`, /not a record/],
    ['not JSON', 'garbage\n', /not JSON/],
    ['an extra field', `${line(8, head.hash, { extra: 1 })}\n`, /not a record/],
  ];
  for (const [title, text, expected] of cases) {
    it(`${title}: ${typeof expected === 'number' ? `adopted (${expected})` : 'refused'}`, () => {
      const result = adoptAppended(Buffer.from(text), head);
      if (typeof expected === 'number') {
        expect(result.ok).to.equal(true);
        if (result.ok) {
          expect(result.count).to.equal(expected);
          expect(result.tail.seq).to.equal(head.seq + expected);
          expect(result.tail.hash).to.equal(auditLineHash(two));
        }
      } else {
        expect(result.ok).to.equal(false);
        if (!result.ok) expect(result.why).to.match(expected);
      }
    });
  }
});
