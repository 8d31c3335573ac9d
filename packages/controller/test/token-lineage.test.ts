/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * Token administration cannot outlive, out-scope or lock out (contract §5 "Tokens"; catalogue
 * "token lineage"): a token minted through the controller records its issuer, ends no later than
 * it and is revoked with it; a token in its rotation grace administers no tokens; a caller
 * administers only tokens whose scopes are a subset of its own; every token operation's audit
 * record names the token, client, scopes and lifetime — never the secret.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Scope } from '@fleet/core';
import { newId, startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
const HOUR = 3_600_000;
const YEAR = 365 * 86_400_000;
const ADMIN: Scope[] = ['node-admin:tokens', 'config:read', 'config:install'];

describe('token lineage through the controller', () => {
  let node: TestNode;
  beforeEach(async () => {
    node = await startNode();
  });
  afterEach(async () => node.dispose());

  const issueThrough = (token: string, scopes: Scope[], ttlMs: number, client = 'minted') =>
    node.call('/v1/tokens/issue', {
      token,
      body: { operationId: newId(), client, scopes, ttlMs },
    });
  const rotateThrough = (token: string, id: string, graceMs = 0) =>
    node.call('/v1/tokens/rotate', { token, body: { operationId: newId(), id, graceMs } });
  const revokeThrough = (token: string, id: string, self = false) =>
    node.call('/v1/tokens/revoke', {
      token,
      body: { operationId: newId(), id, self, reportMinted: true },
    });
  const identity = async (token: string) => {
    const answer = await node.call('/v1/identity', { token });
    return answer.status === 200 ? 'ok' : (answer.body.error.code as string);
  };
  const auditLines = async () =>
    (await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { operation: string; detail: string; code: string });

  it('caps a token minted by a 1-hour token at the minter’s expiry, and revokes it with the minter', async () => {
    const minter = await node.store.issue({ client: 'short', scopes: ADMIN, ttlMs: HOUR });
    const minted = await issueThrough(minter.token, ADMIN, YEAR);
    expect(minted.status, minted.text).to.equal(200);
    expect(Date.parse(minted.body.expiresAt)).to.be.at.most(Date.parse(minter.record.expiresAt));
    // It mints again from what it minted: the grandchild is in the same line.
    const grandchild = await issueThrough(minted.body.token, ['config:read'], YEAR, 'grandchild');
    expect(grandchild.status, grandchild.text).to.equal(200);
    expect(await identity(minted.body.token)).to.equal('ok');

    // The operator revokes the minter on the node: everything it minted goes with it.
    await node.store.revoke(minter.record.id);
    expect(await identity(minted.body.token)).to.equal('AUTH_REVOKED');
    expect(await identity(grandchild.body.token)).to.equal('AUTH_REVOKED');
  });

  it('says how many minted tokens a revoke through the controller revoked with it', async () => {
    const admin = await node.store.issue({ client: 'admin', scopes: ADMIN, ttlMs: YEAR });
    const middle = await issueThrough(admin.token, ADMIN, HOUR, 'middle');
    const leaf = await issueThrough(middle.body.token, ['config:read'], HOUR, 'leaf');
    const answer = await revokeThrough(admin.token, middle.body.id);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.minted).to.deep.equal([leaf.body.id]);
    expect(await identity(leaf.body.token)).to.equal('AUTH_REVOKED');
    expect(await identity(admin.token)).to.equal('ok');
    const record = (await auditLines()).filter((r) => r.operation === 'token-revoke').pop();
    expect(record?.detail).to.contain(`revoked token ${middle.body.id} for middle`);
    expect(record?.detail).to.contain(`1 token(s) minted from it: ${leaf.body.id} (leaf)`);
  });

  it('lists each token’s issuer and lineage; a store without issuers reads as issued on the node', async () => {
    const root = await node.store.issue({ client: 'root', scopes: ADMIN, ttlMs: YEAR });
    const child = await issueThrough(root.token, ADMIN, HOUR, 'child');
    const grandchild = await issueThrough(child.body.token, ['config:read'], HOUR, 'grandchild');
    const answer = await node.call('/v1/tokens/lineage', { token: root.token });
    expect(answer.status, answer.text).to.equal(200);
    const byId = new Map<string, { issuedBy: string | null; lineage: string[] }>(
      answer.body.tokens.map((t: { id: string }) => [t.id, t]),
    );
    expect(byId.get(root.record.id)).to.include({ issuedBy: null });
    expect(byId.get(child.body.id)?.issuedBy).to.equal(root.record.id);
    expect(byId.get(grandchild.body.id)?.lineage).to.deep.equal([child.body.id, root.record.id]);
    // The old list keeps its shape: no issuer in it.
    const list = await node.call('/v1/tokens', { token: root.token });
    expect(list.status, list.text).to.equal(200);
    expect(list.body.tokens[0]).to.not.have.property('issuedBy');

    // A store written before lineage (no issuedBy anywhere) keeps loading.
    const path = join(node.home, STATE, 'tokens.json');
    const stored = JSON.parse(await readFile(path, 'utf8'));
    for (const token of stored.tokens) delete token.issuedBy;
    await writeFile(path, JSON.stringify(stored), { mode: 0o600 });
    const after = await node.call('/v1/tokens/lineage', { token: root.token });
    expect(after.status, after.text).to.equal(200);
    for (const token of after.body.tokens) expect(token).to.include({ issuedBy: null });
  });

  it('lets a token in its rotation grace read, but never administer tokens', async () => {
    const owner = await node.store.issue({ client: 'owner', scopes: ADMIN, ttlMs: YEAR });
    const fresh = await node.store.rotate(owner.record.id, { graceMs: HOUR });
    const stolen = owner.token; // the rotated-out token, still in its grace
    expect((await node.call('/v1/inventory', { token: stolen })).status).to.equal(200);
    for (const answer of [
      await rotateThrough(stolen, fresh.record.id, 0),
      await revokeThrough(stolen, fresh.record.id),
      await issueThrough(stolen, ['config:read'], HOUR),
      await node.call('/v1/tokens', { token: stolen }),
    ]) {
      expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([
        403,
        'SCOPE_DENIED',
      ]);
    }
    expect(await identity(fresh.token)).to.equal('ok');
    const rotates = (await auditLines()).filter((r) => r.operation === 'token-rotate');
    expect(rotates.pop()?.detail).to.contain(`token-rotate of token ${fresh.record.id}`);
  });

  it('refuses a tokens-only token administering a token with more scopes than its own', async () => {
    const full = await node.store.issue({ client: 'admin', scopes: ADMIN, ttlMs: YEAR });
    const narrow = await node.store.issue({
      client: 'helper',
      scopes: ['node-admin:tokens'],
      ttlMs: 10 * 60_000,
    });
    for (const answer of [
      await revokeThrough(narrow.token, full.record.id),
      await rotateThrough(narrow.token, full.record.id),
    ]) {
      expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([
        403,
        'SCOPE_DENIED',
      ]);
    }
    expect(await identity(full.token)).to.equal('ok');
  });

  it('refuses revoking a token the caller was minted from unless the request says self', async () => {
    const root = await node.store.issue({ client: 'root', scopes: ADMIN, ttlMs: YEAR });
    const child = await issueThrough(root.token, ADMIN, HOUR, 'child');
    const refused = await revokeThrough(child.body.token, root.record.id);
    expect([refused.status, refused.body.error?.code]).to.deep.equal([412, 'PRECONDITION_FAILED']);
    expect(await identity(root.token)).to.equal('ok');
    const done = await revokeThrough(child.body.token, root.record.id, true);
    expect([done.status, done.body.self, done.body.minted]).to.deep.equal([
      200,
      true,
      [child.body.id],
    ]);
  });

  it('names token, client, scopes and lifetime in the audit record, never the secret', async () => {
    const admin = await node.store.issue({ client: 'admin', scopes: ADMIN, ttlMs: YEAR });
    const issued = await issueThrough(admin.token, ['config:read'], HOUR, 'laptop');
    const rotated = await rotateThrough(admin.token, issued.body.id, 0);
    const records = await auditLines();
    const issue = records.find((r) => r.operation === 'token-issue');
    expect(issue?.detail).to.contain(
      `issued token ${issued.body.id} for laptop [config:read] expires ${issued.body.expiresAt}`,
    );
    expect(issue?.detail).to.contain(`issuer ${admin.record.id}`);
    const rotate = records.find((r) => r.operation === 'token-rotate');
    expect(rotate?.detail).to.contain(`rotated token ${issued.body.id}`);
    expect(rotate?.detail).to.contain(`into token ${rotated.body.id} for laptop [config:read]`);
    const text = JSON.stringify(records);
    for (const secret of [admin.token, issued.body.token, rotated.body.token]) {
      expect(text).to.not.contain(secret.slice(21));
    }
  });
});
