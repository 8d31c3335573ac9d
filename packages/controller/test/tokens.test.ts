/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/** The token store (contract §5; catalogue A1, C28, F42). */
import { chmod, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { TokenStore } from '../src/tokens/store.js';
import { readLegacyTokenHash } from '../src/tokens/auth.js';
import { statePaths } from '../src/state-paths.js';
import { systemClock } from '../src/context.js';
import { startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await allFiles(path)));
    else out.push(path);
  }
  return out;
}

describe('token store', () => {
  let node: TestNode;
  beforeEach(async () => {
    node = await startNode();
  });
  afterEach(async () => node.dispose());

  it('never stores an issued token in clear, anywhere in the state directory', async () => {
    const issued = await node.store.issue({ client: 'laptop', scopes: ['config:read'] });
    const rotated = await node.store.rotate(issued.record.id);
    expect((await node.call('/v1/identity', { token: rotated.token })).status).to.equal(200);
    expect(
      (await node.call('/v1/identity', { token: 'flt_0000000000000000_' + 'x'.repeat(43) })).status,
    ).to.equal(401);
    for (const file of await allFiles(join(node.home, STATE))) {
      const text = await readFile(file, 'latin1');
      for (const token of [issued.token, rotated.token]) {
        expect(text, file).to.not.contain(token);
        expect(text, file).to.not.contain(token.slice(21)); // the secret part alone
      }
    }
    const stored = JSON.parse(await readFile(join(node.home, STATE, 'tokens.json'), 'utf8'));
    expect(Object.keys(stored.tokens[0]).sort()).to.deep.equal([
      'client',
      'createdAt',
      'expiresAt',
      'graceUntil',
      'id',
      'scopes',
      'sha256',
    ]);
  });

  it('keeps the store 0600 in a 0700 directory', async () => {
    await node.store.issue({ client: 'laptop', scopes: ['config:read'] });
    expect((await stat(join(node.home, STATE, 'tokens.json'))).mode & 0o777).to.equal(0o600);
    expect((await stat(join(node.home, STATE))).mode & 0o777).to.equal(0o700);
  });

  it('fails closed on a corrupt store: every request RECOVERY_REQUIRED, never "no auth"', async () => {
    const token = await node.issue(['config:read']);
    const path = join(node.home, STATE, 'tokens.json');
    const good = await readFile(path, 'utf8');
    await writeFile(path, good.slice(0, good.length / 2));
    for (const request of [{ token }, {}]) {
      const answer = await node.call('/v1/identity', request);
      expect([answer.status, answer.body.error.code]).to.deep.equal([503, 'RECOVERY_REQUIRED']);
    }
    let refused = false;
    await node.store.issue({ client: 'x', scopes: ['config:read'] }).catch(() => (refused = true));
    expect(refused, 'a corrupt store is not overwritten by a fresh one').to.equal(true);
    await writeFile(path, good);
    expect((await node.call('/v1/identity', { token })).status).to.equal(200);
  });

  it('fails closed on a store readable by others, and on an unknown field or scope spelling', async () => {
    const token = await node.issue(['config:read']);
    const path = join(node.home, STATE, 'tokens.json');
    await chmod(path, 0o644);
    expect((await node.call('/v1/identity', { token })).body.error.code).to.equal(
      'RECOVERY_REQUIRED',
    );
    await chmod(path, 0o600);
    const good = await readFile(path, 'utf8');
    await writeFile(path, good.replace('"config:read"', '"Config:Read"'));
    expect((await node.call('/v1/identity', { token })).body.error.code).to.equal(
      'RECOVERY_REQUIRED',
    );
    await writeFile(path, good.replace('"client"', '"admin": true, "client"'));
    expect((await node.call('/v1/identity', { token })).body.error.code).to.equal(
      'RECOVERY_REQUIRED',
    );
  });

  it('serialises concurrent writers: every issued token survives', async () => {
    const other = new TokenStore(statePaths(node.home), systemClock);
    const issued = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? node.store : other).issue({ client: `c${i}`, scopes: ['config:read'] }),
      ),
    );
    const ids = (await node.store.list()).map((record) => record.id);
    for (const { record } of issued) expect(ids).to.include(record.id);
  });

  it('reads the legacy token hash from its config file', async () => {
    const file = join(node.home, 'legacy.sha256');
    await writeFile(file, `sha256:${'AB'.repeat(32)}\n`);
    expect((await readLegacyTokenHash(file)).toString('hex')).to.equal('ab'.repeat(32));
    await writeFile(file, 'the-token-itself');
    let refused = false;
    await readLegacyTokenHash(file).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });
});
