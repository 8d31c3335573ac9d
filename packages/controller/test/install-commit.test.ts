/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON; the assertions navigate them as plain data. */
/**
 * Every write names its commit (contract §8.4, issue 36), node half: the install request's
 * `repoCommit` goes into the receipt and the operation's audit record — only when the request
 * carried it, so an operator that predates the field gets the receipt it knows — and a node that
 * predates it refuses the key before claiming the operation id, so core's `installThrough` sends
 * the same request again without it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  FleetError,
  auditRecordSchema,
  installRequestSchema,
  installThrough,
  receiptSchema,
  verifyAuditChain,
  type InstallRequest,
  type Receipt,
} from '@fleet/core';
import { decodeJson } from '../src/http/request.js';
import { APP } from './support/fixture-registry.js';
import { install, sha256 } from './support/install.js';
import { newId, startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
const COMMIT = 'c0ffee0123456789abcdef0123456789abcdef01';

describe('install: the request names its commit', () => {
  let node: TestNode;
  let token: string;
  const auditLines = async () =>
    (await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8')).split('\n').filter(Boolean);
  const recordOf = async (operationId: string) =>
    (await auditLines())
      .map((line) => auditRecordSchema.parse(JSON.parse(line)))
      .filter((record) => record.operationId === operationId);

  beforeEach(async () => {
    node = await startNode();
    token = await node.issue(['config:install', 'config:read']);
  });
  afterEach(async () => node.dispose());

  it('writes it into the receipt and the audit record, which still chains', async () => {
    const answer = await install(
      node,
      token,
      'fixture',
      [{ path: APP, fileId: 'app.conf', content: 'v1\n' }],
      { repoCommit: COMMIT },
    );
    expect(answer.status, answer.text).to.equal(200);
    const receipt = receiptSchema.parse(answer.body);
    expect(receipt.repoCommit).to.equal(COMMIT);
    const [record] = await recordOf(receipt.operationId);
    expect(record).to.include({ operation: 'install', outcome: 'ok', repoCommit: COMMIT });
    expect(receipt.audit.seq).to.equal(record?.seq);
    expect(verifyAuditChain(await auditLines()).ok).to.equal(true);
    // The operation's status answers the same receipt (a lost connection, contract §15).
    const status = await node.call(`/v1/operations/${receipt.operationId}`, { token });
    expect(status.body.receipt.repoCommit).to.equal(COMMIT);
  });

  it('keeps a request without it as before: no key in the receipt or the record', async () => {
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'v1\n' },
    ]);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body).to.not.have.property('repoCommit');
    const [record] = await recordOf(receiptSchema.parse(answer.body).operationId);
    expect(record).to.not.have.property('repoCommit');
  });

  it('records null as null: the sender read no commit', async () => {
    const answer = await install(
      node,
      token,
      'fixture',
      [{ path: APP, fileId: 'app.conf', content: 'v1\n' }],
      { repoCommit: null },
    );
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.repoCommit).to.equal(null);
    const [record] = await recordOf(receiptSchema.parse(answer.body).operationId);
    expect(record?.repoCommit).to.equal(null);
  });

  it('names it in the record of an install it refuses after reading the body', async () => {
    await node.write(APP, 'live\n');
    const answer = await install(
      node,
      token,
      'fixture',
      [{ path: APP, fileId: 'app.conf', content: 'new\n', expectedSha256: sha256('planned\n') }],
      { repoCommit: COMMIT },
    );
    expect([answer.status, answer.body.error.code]).to.deep.equal([412, 'PRECONDITION_FAILED']);
    const records = (await auditLines()).map((line) => JSON.parse(line) as Record<string, unknown>);
    const refused = records.find(
      (record) => record['operation'] === 'install' && record['code'] === 'PRECONDITION_FAILED',
    );
    expect(refused).to.include({ repoCommit: COMMIT });
  });

  for (const [what, value] of [
    ['an abbreviated id', COMMIT.slice(0, 12)],
    ['upper-case hex', COMMIT.toUpperCase()],
    ['a ref name', 'main'],
    ['a dirty label', `${COMMIT}-dirty`],
    ['free text', 'rendered from my laptop'],
  ] as const) {
    it(`refuses ${what} as the commit (BAD_REQUEST), writing nothing`, async () => {
      const answer = await install(
        node,
        token,
        'fixture',
        [{ path: APP, fileId: 'app.conf', content: 'v1\n' }],
        { repoCommit: value },
      );
      expect([answer.status, answer.body.error.code]).to.deep.equal([400, 'BAD_REQUEST']);
      expect(answer.body.error.message).to.contain('repoCommit');
      expect(await node.read(APP)).to.equal(undefined);
    });
  }
});

/**
 * A node as its pipeline answers an install body: decoded by the controller's own `decodeJson`
 * with `schema` — for a node that predates `repoCommit`, the install schema of before (the same
 * strict object without the key) — its refusal carried as the client carries a node's error
 * (`<host>: <message>`).
 */
function nodeWith(
  schema:
    | typeof installRequestSchema
    | ReturnType<typeof olderSchema>
    | ReturnType<typeof beforeToolOutput>
    | ReturnType<typeof beforeBoth>,
): {
  sent: InstallRequest[];
  client: { install(request: InstallRequest): Promise<Receipt> };
} {
  const sent: InstallRequest[] = [];
  return {
    sent,
    client: {
      install(request) {
        sent.push(request);
        try {
          decodeJson(Buffer.from(JSON.stringify(request), 'utf8'), schema);
        } catch (error) {
          const failure = error as FleetError;
          return Promise.reject(new FleetError(failure.code, `node-01: ${failure.message}`));
        }
        return Promise.resolve(receiptFor(request));
      },
    },
  };
}

const olderSchema = () => installRequestSchema.unwrap().omit({ repoCommit: true });
/** A node that predates `toolOutput` (issue 40), and one that predates both keys. */
const beforeToolOutput = () => installRequestSchema.unwrap().omit({ toolOutput: true });
const beforeBoth = () => installRequestSchema.unwrap().omit({ repoCommit: true, toolOutput: true });

function receiptFor(request: InstallRequest): Receipt {
  return {
    schema: 'fleet.receipt/v1',
    operationId: request.operationId,
    host: 'node-01',
    domain: request.domain,
    outcome: 'unchanged',
    files: [],
    actions: [],
    verified: true,
    finishedAt: '2026-12-05T10:00:00.000Z',
    audit: { seq: 1, sha256: '0'.repeat(64) },
  };
}

describe('install through a node that predates repoCommit', () => {
  const request: InstallRequest = {
    operationId: newId(),
    domain: 'fixture',
    files: [{ fileId: 'app.conf', path: APP, expectedSha256: null, content: 'v1\n' }],
    parameters: {},
    repoCommit: COMMIT,
  };
  const refusalOf = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail('expected a refusal'),
      (error: unknown) => error as FleetError,
    );

  it('is refused naming the key, then sent again without it under the same operation id', async () => {
    const { sent, client } = nodeWith(olderSchema());
    const answer = await installThrough(client, request);
    expect(answer.commitSent).to.equal(false);
    expect(answer.receipt.operationId).to.equal(request.operationId);
    expect(sent.map((r) => [r.operationId, r.repoCommit])).to.deep.equal([
      [request.operationId, COMMIT],
      [request.operationId, undefined],
    ]);
    expect(sent[1]).to.not.have.property('repoCommit');
  });

  it('a current node takes it in one request', async () => {
    const { sent, client } = nodeWith(installRequestSchema);
    const answer = await installThrough(client, request);
    expect([answer.commitSent, sent.length]).to.deep.equal([true, 1]);
  });

  it('is not asked again when the node knows the key and refuses the value: that refusal stands', async () => {
    const { sent, client } = nodeWith(installRequestSchema);
    const bad = { ...request, repoCommit: 'main' };
    const failure = await refusalOf(installThrough(client, bad));
    expect([failure.code, sent.length]).to.deep.equal(['BAD_REQUEST', 1]);
    expect(failure.message)
      .to.contain('repoCommit')
      .and.not.match(/unrecognized key/i);
  });

  it('a node that predates toolOutput is sent the request again without it, the commit kept', async () => {
    const { sent, client } = nodeWith(beforeToolOutput());
    const answer = await installThrough(client, { ...request, toolOutput: true });
    expect(answer.commitSent).to.equal(true);
    expect(sent.map((r) => [r.repoCommit, r.toolOutput])).to.deep.equal([
      [COMMIT, true],
      [COMMIT, undefined],
    ]);
    expect(sent[1]).to.not.have.property('toolOutput');
  });

  it('a node that predates both keys refuses them in one answer: sent once more without both', async () => {
    const { sent, client } = nodeWith(beforeBoth());
    const answer = await installThrough(client, { ...request, toolOutput: true });
    expect([answer.commitSent, sent.length]).to.deep.equal([false, 2]);
    expect(sent[1]).to.not.have.any.keys('repoCommit', 'toolOutput');
    expect(sent[1]?.operationId).to.equal(request.operationId);
  });

  it('an older node refusing another field too: the request without the key is refused for it', async () => {
    const { sent, client } = nodeWith(olderSchema());
    const bad = { ...request, parameters: { x: 1 } } as unknown as InstallRequest;
    const failure = await refusalOf(installThrough(client, bad));
    expect([failure.code, sent.length]).to.deep.equal(['BAD_REQUEST', 2]);
    expect(failure.message).to.contain('parameters.x').and.not.contain('repoCommit');
  });
});
