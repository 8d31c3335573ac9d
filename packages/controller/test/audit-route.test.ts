/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * `POST /v1/audit` (core `wire/audit-read.ts`): the audit log read back verbatim, for
 * `fleet audit verify --host`. Scope `config:read` only (never the legacy token: the log names
 * clients and paths); paging by line over every segment; only the segments are ever read
 * (contract §5; catalogue C27, E38).
 */
import { createHash } from 'node:crypto';
import {
  appendFile,
  mkdtemp,
  readFile,
  readdir,
  rename,
  rm,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { auditLineHash, verifyAuditChain, type Scope } from '@fleet/core';
import { APP } from './support/fixture-registry.js';
import { install } from './support/install.js';
import { startNode, type Answer, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
const LEGACY_TOKEN = 'legacy-shared-token-of-the-old-fleet';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Every line, paging with `limit` until `more` is false. */
async function readAll(node: TestNode, token: string, limit: number): Promise<Answer[]> {
  const pages: Answer[] = [];
  let fromSeq = 1;
  for (;;) {
    const answer = await node.call('/v1/audit', { token, body: { fromSeq, limit } });
    expect(answer.status, answer.text).to.equal(200);
    pages.push(answer);
    if (!answer.body.more) return pages;
    fromSeq += answer.body.lines.length;
  }
}

describe('audit route (POST /v1/audit)', () => {
  let node: TestNode;
  let reader: string;
  const auditPath = () => join(node.home, STATE, 'audit.jsonl');
  const fileLines = async () => (await readFile(auditPath(), 'utf8')).trimEnd().split('\n');

  beforeEach(async () => {
    // Read records wait for an explicit flush here: what the file holds never depends on timing.
    node = await startNode({
      legacyTokenSha256: sha256(LEGACY_TOKEN),
      limits: { auditReadFlushMs: 60_000, auditRefusalIntervalMs: 60_000 },
    });
    reader = await node.issue(['config:read']);
  });
  afterEach(async () => node.dispose());

  describe('scopes', () => {
    it('answers a config:read token', async () => {
      const answer = await node.call('/v1/audit', { token: reader, body: {} });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body).to.deep.equal({
        nodeId: 'node-01',
        fromSeq: 1,
        lines: [],
        head: null,
        more: false,
        torn: false,
      });
    });

    it('refuses the legacy token and every other scope (SCOPE_DENIED), and audits the refusal', async () => {
      const others: Scope[] = [
        'config:install',
        'config:adopt',
        'versions:read',
        'runtime:upgrade',
        'node-admin:bootstrap',
        'node-admin:tokens',
      ];
      const tokens = [LEGACY_TOKEN, ...(await Promise.all(others.map((s) => node.issue([s]))))];
      for (const token of tokens) {
        const answer = await node.call('/v1/audit', { token, body: {} });
        expect([answer.status, answer.body.error.code], answer.text).to.deep.equal([
          403,
          'SCOPE_DENIED',
        ]);
        expect(answer.text).to.not.contain('"lines"');
      }
      // Refused before any body was read: counted per client, one record each per interval.
      await node.controller.runtime.audit.flush();
      const records = (await fileLines()).map((line) => JSON.parse(line));
      expect(records).to.have.length(tokens.length);
      expect(records[0]).to.include({ operation: 'audit', outcome: 'denied', client: 'legacy' });
      expect(records[0].aggregate.count).to.equal(1);
    });

    it('401 without a token', async () => {
      const answer = await node.call('/v1/audit', { body: {} });
      expect([answer.status, answer.body.error.code]).to.deep.equal([401, 'AUTH_REQUIRED']);
    });

    it('refuses a bad body: limit over 5000, fromSeq 0, an unknown field, no body', async () => {
      for (const body of [
        { limit: 5001 },
        { fromSeq: 0 },
        { fromSeq: 1, path: '~/x' },
        { limit: 1.5 },
      ]) {
        const answer = await node.call('/v1/audit', { token: reader, body });
        expect([answer.status, answer.body.error.code], JSON.stringify(body)).to.deep.equal([
          400,
          'BAD_REQUEST',
        ]);
      }
      const answer = await node.call('/v1/audit', { token: reader, method: 'POST' });
      expect(answer.status).to.equal(400);
    });
  });

  describe('reading', () => {
    let writer: string;
    beforeEach(async () => {
      writer = await node.issue(['config:install']);
      await install(node, writer, 'fixture', [{ path: APP, fileId: 'app.conf', content: 'one\n' }]);
      // 24 refused reads, each naming its path, each its own record (reads are counted per
      // interval: one flush each).
      for (let i = 0; i < 24; i += 1) {
        await node.call('/v1/export', { token: reader, body: { path: `~/.ssh/id_${i}` } });
        await node.controller.runtime.audit.flush();
      }
    });

    it('pages by line with fromSeq and limit; the lines are the file verbatim, with its head', async () => {
      const text = await readFile(auditPath(), 'utf8');
      const lines = text.trimEnd().split('\n');
      expect(lines).to.have.length(25);
      const pages = await readAll(node, reader, 10);
      expect(pages.map((p) => p.body.lines.length)).to.deep.equal([10, 10, 5]);
      expect(pages.map((p) => p.body.fromSeq)).to.deep.equal([1, 11, 21]);
      expect(pages.map((p) => p.body.more)).to.deep.equal([true, true, false]);
      const read = pages.flatMap((p) => p.body.lines as string[]);
      expect(read).to.deep.equal(lines);
      const head = pages[0]?.body.head;
      expect(head).to.deep.equal({ seq: 25, sha256: auditLineHash(lines[24] as string) });
      expect(verifyAuditChain(read, { head }).ok).to.equal(true);
      // One page when the limit allows; an empty last page past the end.
      const all = await node.call('/v1/audit', { token: reader, body: { limit: 5000 } });
      expect(all.body.lines).to.deep.equal(lines);
      expect(all.body.more).to.equal(false);
      const past = await node.call('/v1/audit', { token: reader, body: { fromSeq: 26 } });
      expect([past.body.lines, past.body.more]).to.deep.equal([[], false]);
      expect(JSON.parse(lines[1] as string)).to.include({ operation: 'export', outcome: 'failed' });
    });

    it('counts successful reads per client and interval: one record with the count, written after the answers', async () => {
      const before = await fileLines();
      const pages = await readAll(node, reader, 7);
      expect(await fileLines()).to.deep.equal(before); // not yet: reads are counted per interval
      await node.controller.runtime.audit.flush();
      const added = (await fileLines()).slice(before.length).map((line) => JSON.parse(line));
      expect(added).to.have.length(1);
      expect(added[0]).to.include({ operation: 'audit', outcome: 'ok', operationId: null });
      expect(added[0].client).to.be.a('string');
      expect(added[0].aggregate.count).to.equal(pages.length);
      expect(verifyAuditChain(`${(await fileLines()).join('\n')}\n`).ok).to.equal(true);
    });

    it('answers an edited line as it is, so the operator sees the break', async () => {
      const lines = await fileLines();
      lines[0] = (lines[0] as string).replace(APP, '~/.config/fixture/other.conf');
      await writeFile(auditPath(), `${lines.join('\n')}\n`);
      const answer = await node.call('/v1/audit', { token: reader, body: { limit: 5000 } });
      expect(answer.body.lines).to.deep.equal(lines);
      const result = verifyAuditChain(answer.body.lines, { head: answer.body.head });
      expect(result.problems[0]).to.include({ kind: 'edited', line: 1 });
    });

    it('catches an edit of the last line through the head it answers', async () => {
      const lines = await fileLines();
      lines[24] = (lines[24] as string).replace('"outcome":"failed"', '"outcome":"ok"');
      await writeFile(auditPath(), `${lines.join('\n')}\n`);
      const answer = await node.call('/v1/audit', { token: reader, body: { limit: 5000 } });
      expect(verifyAuditChain(answer.body.lines).ok).to.equal(true); // the lines alone cannot tell
      expect(verifyAuditChain(answer.body.lines, { head: answer.body.head }).ok).to.equal(false);
    });

    it('reports an incomplete last line as torn and never answers it as a line', async () => {
      const before = await fileLines();
      await appendFile(auditPath(), '{"seq":26,"ts":"2026-');
      const answer = await node.call('/v1/audit', { token: reader, body: { limit: 5000 } });
      expect(answer.body.torn).to.equal(true);
      expect(answer.body.lines).to.deep.equal(before);
      expect(answer.text).to.not.contain('"seq\\":26');
      const middle = await node.call('/v1/audit', { token: reader, body: { limit: 5 } });
      expect([middle.body.more, middle.body.torn]).to.deep.equal([true, false]);
    });

    it('never answers the torn-line sidecar, only audit.jsonl', async () => {
      await node.controller.close();
      await appendFile(auditPath(), '{"seq":26,"sidecar-marker":');
      await node.restart();
      const sidecars = (await readdir(join(node.home, STATE))).filter((n) =>
        n.startsWith('audit.jsonl.torn-'),
      );
      expect(sidecars).to.have.length(1);
      const pages = await readAll(node, reader, 5000);
      const text = pages.map((p) => p.text).join('');
      expect(text).to.not.contain('sidecar-marker');
      expect(pages.flatMap((p) => p.body.lines as string[])).to.deep.equal(await fileLines());
      expect(pages[0]?.body.torn).to.equal(false);
    });

    it('refuses an audit.jsonl swapped for a symlink out of the home, answering nothing of it', async () => {
      const outside = await mkdtemp(join(tmpdir(), 'fleet-outside-'));
      try {
        await writeFile(join(outside, 'stolen'), 'OUTSIDE-CONTENT\n');
        await rename(auditPath(), `${auditPath()}.moved`);
        await symlink(join(outside, 'stolen'), auditPath());
        const answer = await node.call('/v1/audit', { token: reader, body: {} });
        expect(answer.status).to.be.oneOf([403, 409]);
        expect(answer.body.error.code).to.be.oneOf(['PATH_OUTSIDE_ROOT', 'SYMLINK_REFUSED']);
        expect(answer.text).to.not.contain('OUTSIDE-CONTENT');
      } finally {
        await rm(auditPath(), { force: true });
        await rename(`${auditPath()}.moved`, auditPath()).catch(() => undefined);
        await rm(outside, { recursive: true, force: true });
      }
    });

    it('answers an empty page for an empty file', async () => {
      await truncate(auditPath(), 0);
      const answer = await node.call('/v1/audit', { token: reader, body: {} });
      expect([answer.body.lines, answer.body.more, answer.body.torn]).to.deep.equal([
        [],
        false,
        false,
      ]);
      expect(answer.body.head?.seq).to.equal(25); // the controller still remembers its head
    });
  });
});
