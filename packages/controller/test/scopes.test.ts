/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * The scope matrix (catalogue A2, contract §5): every operation × every scope, and the legacy shared
 * token, declared in one table; then expired, revoked and rotated tokens.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { FixedClock } from '@fleet/testkit';
import { SCOPES, type Scope } from '@fleet/core';
import { APP } from './support/fixture-registry.js';
import { newId, startNode, type Answer, type TestNode } from './support/node.js';

type Principal = Scope | 'legacy';
type Call =
  | 'identity'
  | 'health'
  | 'inventory'
  | 'export'
  | 'snapshot'
  | 'audit'
  | 'install'
  | 'capture'
  | 'probe:file'
  | 'probe:version'
  | 'probe:supervisor'
  | 'versions'
  | 'operation-status'
  | 'runtime-stage:upgrade'
  | 'runtime-stage:bootstrap'
  | 'runtime-activate'
  | 'runtime-status'
  | 'runtime-rollback'
  | 'summary'
  | 'token-list'
  | 'token-lineage'
  | 'token-issue'
  | 'token-rotate'
  | 'token-revoke';

const Y = true;
const N = false;
// prettier-ignore
const MATRIX: Record<Call, Record<Principal, boolean>> = {
  //                  config:read  install  adopt  versions  upgrade  bootstrap  tokens  legacy
  'identity':         { 'config:read': Y, 'config:install': Y, 'config:adopt': Y, 'versions:read': Y, 'runtime:upgrade': Y, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: Y },
  'health':           { 'config:read': Y, 'config:install': Y, 'config:adopt': Y, 'versions:read': Y, 'runtime:upgrade': Y, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: Y },
  'inventory':        { 'config:read': Y, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: Y },
  'export':           { 'config:read': Y, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: Y },
  'snapshot':         { 'config:read': Y, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: Y },
  'audit':            { 'config:read': Y, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: N },
  'install':          { 'config:read': N, 'config:install': Y, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: N },
  'capture':          { 'config:read': N, 'config:install': N, 'config:adopt': Y, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: N },
  'probe:file':       { 'config:read': Y, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: Y },
  'probe:version':    { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': Y, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: Y },
  // A supervisor's runtime prober: the controller's own supervision, any read scope (contract §5).
  'probe:supervisor': { 'config:read': Y, 'config:install': N, 'config:adopt': N, 'versions:read': Y, 'runtime:upgrade': N, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: Y },
  'versions':         { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': Y, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: Y },
  'operation-status': { 'config:read': Y, 'config:install': Y, 'config:adopt': Y, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: Y },
  'runtime-stage:upgrade':   { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': Y, 'node-admin:bootstrap': N, 'node-admin:tokens': N, legacy: N },
  'runtime-stage:bootstrap': { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: N },
  'runtime-activate':        { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': Y, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: N },
  'runtime-status':          { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': Y, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: N },
  'runtime-rollback':        { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: N },
  'summary':                 { 'config:read': Y, 'config:install': N, 'config:adopt': N, 'versions:read': Y, 'runtime:upgrade': Y, 'node-admin:bootstrap': Y, 'node-admin:tokens': N, legacy: Y },
  'token-list':              { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': Y, legacy: N },
  'token-lineage':           { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': Y, legacy: N },
  'token-issue':             { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': Y, legacy: N },
  'token-rotate':            { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': Y, legacy: N },
  'token-revoke':            { 'config:read': N, 'config:install': N, 'config:adopt': N, 'versions:read': N, 'runtime:upgrade': N, 'node-admin:bootstrap': N, 'node-admin:tokens': Y, legacy: N },
};

const LEGACY_TOKEN = 'legacy-shared-token-of-the-old-fleet';
const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

async function invoke(node: TestNode, what: Call, token: string): Promise<Answer> {
  switch (what) {
    case 'identity':
      return node.call('/v1/identity', { token });
    case 'health':
      return node.call('/v1/health', { token });
    case 'inventory':
      return node.call('/v1/inventory', { token });
    case 'export':
      return node.call('/v1/export', { token, body: { path: APP } });
    case 'audit':
      return node.call('/v1/audit', { token, body: { fromSeq: 1, limit: 10 } });
    case 'snapshot':
      return node.call('/v1/snapshot', {
        token,
        body: { files: [{ domain: 'fixture', path: APP }], backups: true },
      });
    case 'install': {
      const live = await node.read(APP);
      return node.call('/v1/install', {
        token,
        body: {
          operationId: newId(),
          domain: 'fixture',
          files: [
            {
              fileId: 'app.conf',
              path: APP,
              expectedSha256: live ? sha256(live) : null,
              content: `v ${newId()}\n`,
            },
          ],
          parameters: {},
        },
      });
    }
    case 'capture':
      return node.call('/v1/capture', { token, body: { operationId: newId(), path: APP } });
    case 'probe:file':
      return node.call('/v1/probe', { token, body: { prober: 'fixture.facts', parameters: {} } });
    case 'probe:version':
      return node.call('/v1/probe', { token, body: { prober: 'tools.versions', parameters: {} } });
    case 'probe:supervisor':
      return node.call('/v1/probe', { token, body: { prober: 'supervisor.unit', parameters: {} } });
    case 'versions':
      return node.call('/v1/versions', { token, body: { tools: [] } });
    case 'operation-status':
      return node.call(`/v1/operations/${newId()}`, { token });
    case 'runtime-stage:upgrade':
    case 'runtime-stage:bootstrap':
      // Declares 4 bytes but carries 3: past the scopes, the node refuses the bytes.
      return node.call('/v1/runtime/stage', {
        token,
        body: {
          operationId: newId(),
          kind: what === 'runtime-stage:upgrade' ? 'upgrade' : 'bootstrap',
          supervisor: 'systemd-user',
          planId: null,
          target: {
            nodeId: 'node-01',
            package: '@fleet/cli',
            version: '1.0.0',
            build: { sha256: 'a'.repeat(64), commit: null },
            protocol: { min: 1, max: 1 },
            catalog: { domains: [], probers: [], bootstrapAdapters: [] },
          },
          artifact: { sha256: 'a'.repeat(64), bytes: 4, content: 'AAAA' },
        },
      });
    case 'runtime-activate':
      return node.call('/v1/runtime/activate', {
        token,
        body: { operationId: newId(), transaction: 'no-such-transaction' },
      });
    case 'runtime-status':
      return node.call('/v1/runtime/status', { token, body: {} });
    case 'runtime-rollback':
      return node.call('/v1/runtime/rollback', { token, body: { operationId: newId() } });
    case 'summary':
      return node.call('/v1/summary', { token });
    case 'token-list':
      return node.call('/v1/tokens', { token });
    case 'token-lineage':
      return node.call('/v1/tokens/lineage', { token });
    case 'token-issue':
      // Only scopes the caller holds: a node-admin:tokens token may issue node-admin:tokens.
      return node.call('/v1/tokens/issue', {
        token,
        body: {
          operationId: newId(),
          client: 'matrix',
          scopes: ['node-admin:tokens'],
          ttlMs: 60_000,
        },
      });
    case 'token-rotate':
      return node.call('/v1/tokens/rotate', {
        token,
        body: { operationId: newId(), id: '0'.repeat(16), graceMs: 0 },
      });
    case 'token-revoke':
      return node.call('/v1/tokens/revoke', {
        token,
        body: { operationId: newId(), id: '0'.repeat(16), self: false },
      });
  }
}

/** What an allowed call answers when it is not 200: past the scopes, refused for its content. */
const ALLOWED_REFUSAL: Partial<Record<Call, string>> = {
  'runtime-stage:upgrade': 'GENERATION_INVALID',
  'runtime-stage:bootstrap': 'GENERATION_INVALID',
  'runtime-activate': 'PRECONDITION_FAILED',
  'runtime-rollback': 'NO_PRIOR_GENERATION',
  'token-rotate': 'TOKEN_NOT_FOUND',
  'token-revoke': 'TOKEN_NOT_FOUND',
};

describe('scope matrix', () => {
  let node: TestNode;
  const tokens = new Map<Principal, string>();
  before(async () => {
    node = await startNode({ legacyTokenSha256: sha256(LEGACY_TOKEN) });
    await node.write(APP, 'initial\n');
    for (const scope of SCOPES) tokens.set(scope, await node.issue([scope]));
    tokens.set('legacy', LEGACY_TOKEN);
  });
  after(async () => node.dispose());

  for (const [what, row] of Object.entries(MATRIX) as [Call, Record<Principal, boolean>][]) {
    for (const [principal, allowed] of Object.entries(row) as [Principal, boolean][]) {
      it(`${what} with ${principal}: ${allowed ? 'allowed' : 'SCOPE_DENIED'}`, async () => {
        const before = await node.read(APP);
        const answer = await invoke(node, what, tokens.get(principal) as string);
        if (allowed) {
          expect(answer.status, answer.text).to.not.be.oneOf([401, 403]);
          const refusal = ALLOWED_REFUSAL[what];
          if (refusal) expect(answer.body.error.code, answer.text).to.equal(refusal);
          else
            expect(answer.status, answer.text).to.be.oneOf(
              what === 'operation-status' ? [404] : [200],
            );
        } else {
          expect(answer.status, answer.text).to.equal(403);
          expect(answer.body.error.code).to.equal('SCOPE_DENIED');
          expect(await node.read(APP)).to.deep.equal(before); // nothing touched
        }
      });
    }
  }

  it('never records a token in the audit log, for allowed or denied calls', async () => {
    const audit = await readFile(`${node.home}/.local/state/fleet/audit.jsonl`, 'utf8');
    expect(audit).to.contain('"outcome":"denied"');
    for (const token of tokens.values()) expect(audit).to.not.contain(token);
  });
});

describe('token lifecycle over HTTP', () => {
  let node: TestNode;
  let clock: FixedClock;
  before(async () => {
    clock = new FixedClock(new Date());
    node = await startNode({ clock });
  });
  after(async () => node.dispose());

  const identity = (token?: string, header?: string) =>
    node.call(
      '/v1/identity',
      header === undefined
        ? token === undefined
          ? {}
          : { token }
        : { headers: { authorization: header } },
    );

  it('401 AUTH_REQUIRED without a token', async () => {
    const answer = await identity();
    expect([answer.status, answer.body.error.code]).to.deep.equal([401, 'AUTH_REQUIRED']);
  });

  it('answers unknown and malformed tokens with the same body', async () => {
    const real = await node.issue(['config:read']);
    const unknown = `${real.slice(0, 21)}${'A'.repeat(43)}`; // right id, wrong secret
    const unknownId = `flt_0000000000000000_${'B'.repeat(43)}`;
    const answers = await Promise.all([
      identity(unknown),
      identity(unknownId),
      identity('garbage'),
      identity(undefined, 'Bearer '),
      identity(undefined, `Bearer ${'x'.repeat(5000)}`),
      identity(undefined, 'Basic abc'),
    ]);
    for (const answer of answers) {
      expect(answer.status).to.equal(401);
      expect(answer.text).to.equal(answers[0]?.text);
    }
    expect(answers[0]?.body.error.code).to.equal('AUTH_INVALID');
  });

  it('refuses an expired token (AUTH_EXPIRED), judged on the controller clock', async () => {
    const issued = await node.store.issue({
      client: 'short',
      scopes: ['config:read'],
      ttlMs: 60_000,
    });
    expect((await identity(issued.token)).status).to.equal(200);
    clock.advance(61_000);
    const answer = await identity(issued.token);
    expect([answer.status, answer.body.error.code]).to.deep.equal([401, 'AUTH_EXPIRED']);
  });

  it('refuses a revoked token at the next request (AUTH_REVOKED)', async () => {
    const issued = await node.store.issue({ client: 'gone', scopes: ['config:read'] });
    expect((await identity(issued.token)).status).to.equal(200);
    await node.store.revoke(issued.record.id);
    const answer = await identity(issued.token);
    expect([answer.status, answer.body.error.code]).to.deep.equal([401, 'AUTH_REVOKED']);
  });

  it('accepts a rotated-out token during its grace period only', async () => {
    const old = await node.store.issue({ client: 'rot', scopes: ['config:read'] });
    // The store's own clock is the system clock; align the controller's with it first.
    clock.set(new Date());
    const rotated = await node.store.rotate(old.record.id, { graceMs: 10 * 60_000 });
    expect(rotated.record.id).to.not.equal(old.record.id);
    expect(rotated.record.rotatedFrom).to.equal(old.record.id);
    expect((await identity(old.token)).status).to.equal(200); // in grace
    expect((await identity(rotated.token)).status).to.equal(200);
    clock.advance(11 * 60_000);
    const answer = await identity(old.token);
    expect([answer.status, answer.body.error.code]).to.deep.equal([401, 'AUTH_EXPIRED']);
    expect((await identity(rotated.token)).status).to.equal(200);
  });

  it('gives a re-issued client a fresh accessor; the revoked one stays refused', async () => {
    const first = await node.store.issue({ client: 'same-name', scopes: ['config:read'] });
    await node.store.revoke(first.record.id);
    const second = await node.store.issue({ client: 'same-name', scopes: ['config:read'] });
    expect(second.record.id).to.not.equal(first.record.id);
    expect((await identity(second.token)).status).to.equal(200);
    expect((await identity(first.token)).body.error.code).to.equal('AUTH_REVOKED');
  });

  it('refuses scopes that differ in case or whitespace', async () => {
    for (const scope of ['Config:Install', 'config:install ', 'config:*']) {
      let failed = false;
      await node.store
        .issue({ client: 'x', scopes: [scope as Scope] })
        .catch(() => (failed = true));
      expect(failed, scope).to.equal(true);
    }
  });
});

describe('token administration over HTTP (node-admin:tokens)', () => {
  let node: TestNode;
  let clock: FixedClock;
  let admin: string;
  const adminId = () => admin.slice(4, 20);
  before(async () => {
    clock = new FixedClock(new Date());
    node = await startNode({ clock });
    admin = await node.issue(['node-admin:tokens', 'config:read']);
  });
  after(async () => node.dispose());

  const post = (path: string, body: Record<string, unknown>, token = admin) =>
    node.call(path, { token, body: { operationId: newId(), ...body } });

  it('rotates: the new token works, the old one only during its grace period', async () => {
    clock.set(new Date());
    const reader = await node.store.issue({ client: 'reader', scopes: ['config:read'] });
    const rotated = await post('/v1/tokens/rotate', { id: reader.record.id, graceMs: 60_000 });
    expect(rotated.status, rotated.text).to.equal(200);
    expect(rotated.body).to.include({ rotatedFrom: reader.record.id, client: 'reader' });
    const fresh = rotated.body.token as string;
    expect((await node.call('/v1/identity', { token: reader.token })).status).to.equal(200);
    clock.advance(61_000);
    const old = await node.call('/v1/identity', { token: reader.token });
    expect([old.status, old.body.error.code]).to.deep.equal([401, 'AUTH_EXPIRED']);
    expect((await node.call('/v1/identity', { token: fresh })).status).to.equal(200);
    // rotating it again (no longer active) is a precondition that does not hold
    const again = await post('/v1/tokens/rotate', { id: reader.record.id, graceMs: 0 });
    expect([again.status, again.body.error.code]).to.deep.equal([412, 'PRECONDITION_FAILED']);
  });

  it('never gives a token a scope its caller lacks, nor administers one with more (issue, rotate, revoke), and changes nothing', async () => {
    clock.set(new Date());
    const before = (await node.store.list()).length;
    const issue = await post('/v1/tokens/issue', {
      client: 'escalate',
      scopes: ['config:install'],
      ttlMs: 60_000,
    });
    expect([issue.status, issue.body.error.code]).to.deep.equal([403, 'SCOPE_DENIED']);
    const bootstrap = await node.store.issue({ client: 'boot', scopes: ['node-admin:bootstrap'] });
    const rotate = await post('/v1/tokens/rotate', { id: bootstrap.record.id, graceMs: 0 });
    expect([rotate.status, rotate.body.error.code]).to.deep.equal([403, 'SCOPE_DENIED']);
    expect((await node.store.list()).length).to.equal(before + 1); // only the one issued locally
    // Revoking a token with a scope the caller lacks is refused too: a tokens-only token would
    // otherwise lock out every stronger administrator.
    const revoke = await post('/v1/tokens/revoke', { id: bootstrap.record.id, self: false });
    expect([revoke.status, revoke.body.error.code]).to.deep.equal([403, 'SCOPE_DENIED']);
    const stored = (await node.store.list()).find((t) => t.id === bootstrap.record.id);
    expect(stored?.revokedAt).to.equal(undefined);
  });

  it('refuses to revoke the calling token unless the request says self, and then does', async () => {
    clock.set(new Date());
    const own = await node.issue(['node-admin:tokens']);
    const id = own.slice(4, 20);
    const refused = await post('/v1/tokens/revoke', { id, self: false }, own);
    expect([refused.status, refused.body.error.code]).to.deep.equal([412, 'PRECONDITION_FAILED']);
    expect(refused.body.error.message).to.match(/locks .* out of this node/);
    expect((await node.call('/v1/tokens', { token: own })).status).to.equal(200);
    const done = await post('/v1/tokens/revoke', { id, self: true }, own);
    expect(done.status, done.text).to.equal(200);
    expect(done.body.self).to.equal(true);
    const after = await node.call('/v1/tokens', { token: own });
    expect([after.status, after.body.error.code]).to.deep.equal([401, 'AUTH_REVOKED']);
  });

  it('lists tokens without a secret or a hash, naming the caller', async () => {
    const list = await node.call('/v1/tokens', { token: admin });
    expect(list.status, list.text).to.equal(200);
    expect(list.body.self).to.equal(adminId());
    const stored = await node.store.list();
    expect(list.text).to.not.match(/flt_[0-9a-f]{16}_/);
    for (const record of stored) expect(list.text).to.not.contain(record.sha256);
  });

  it('refuses a replayed operation id (also a fresh request with a used id), never minting twice', async () => {
    clock.set(new Date());
    const operationId = newId();
    const body = { operationId, client: 'once', scopes: ['config:read'], ttlMs: 60_000 };
    const first = await node.call('/v1/tokens/issue', { token: admin, body });
    expect(first.status, first.text).to.equal(200);
    const replay = await node.call('/v1/tokens/issue', { token: admin, body });
    expect([replay.status, replay.body.error.code]).to.deep.equal([409, 'REPLAY_REJECTED']);
    expect((await node.store.list()).filter((r) => r.client === 'once')).to.have.length(1);
  });

  it('keeps new tokens out of the audit log, which records every token operation', async () => {
    const audit = await readFile(`${node.home}/.local/state/fleet/audit.jsonl`, 'utf8');
    expect(audit).to.contain('"operation":"token-rotate"');
    expect(audit).to.contain('"operation":"token-issue"');
    expect(audit).to.not.match(/flt_[0-9a-f]{16}_/);
  });
});
