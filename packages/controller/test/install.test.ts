/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/** The node half of install (contract §8.4, §15; catalogue A3, A8, C, D30, F43). */
import { lstat, readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { FixedClock } from '@fleet/testkit';
import { APP, SECOND, SVC } from './support/fixture-registry.js';
import { install, installBody, sha256, waitForFile, withFailpoint } from './support/install.js';
import { newId, startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';

describe('install', () => {
  let node: TestNode;
  let token: string;
  const backupsOf = async (domain: string) =>
    (await readdir(join(node.home, STATE, 'backups', domain)).catch(() => [] as string[])).sort();
  const tempsIn = async (path: string) =>
    (await readdir(dirname(node.abs(path))).catch(() => [] as string[])).filter((n) =>
      n.startsWith('.fleet-tmp-'),
    );

  beforeEach(async () => {
    node = await startNode();
    token = await node.issue(['config:install', 'config:read']);
  });
  afterEach(async () => node.dispose());

  it('installs a new file with the secret resolved on the node, and a redacted receipt', async () => {
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'user=app\npassword={{ secret.CANARY }}\n' },
    ]);
    expect(answer.status, answer.text).to.equal(200);
    const receipt = answer.body;
    expect(receipt).to.include({
      schema: 'fleet.receipt/v1',
      host: 'node-01',
      domain: 'fixture',
      outcome: 'installed',
      verified: true,
    });
    const installed = `user=app\npassword=${node.canary}\n`;
    expect(await readFile(node.abs(APP), 'utf8')).to.equal(installed);
    expect(receipt.files[0]).to.include({
      path: APP,
      beforeSha256: null,
      afterSha256: sha256(installed),
      backupPath: null,
      state: 'written',
    });
    expect(receipt.files[0].diff).to.contain('+password={{ secret.CANARY }}');
    expect(answer.text).to.not.contain(node.canary);
    expect((await stat(node.abs(APP))).mode & 0o777).to.equal(0o600);
    expect((await stat(dirname(node.abs(APP)))).mode & 0o777).to.equal(0o700);
    expect(await tempsIn(APP)).to.deep.equal([]);
  });

  it('replaces a file: backup 0600 in a 0700 directory, mode kept, backup named in receipt and audit', async () => {
    await node.write(APP, 'old\n', 0o640);
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'new\n' },
    ]);
    expect(answer.status, answer.text).to.equal(200);
    const file = answer.body.files[0];
    expect(file).to.include({ beforeSha256: sha256('old\n'), afterSha256: sha256('new\n') });
    expect(file.backupPath).to.match(
      /^~\/\.local\/state\/fleet\/backups\/fixture\/app\.conf-[0-9a-f]{16}\.\d{8}T\d{6}Z\.[0-9A-Z]{26}\.000\.bak$/,
    );
    const backup = node.abs(file.backupPath);
    expect(await readFile(backup, 'utf8')).to.equal('old\n');
    expect((await stat(backup)).mode & 0o777).to.equal(0o600);
    expect((await stat(dirname(backup))).mode & 0o777).to.equal(0o700);
    expect((await stat(node.abs(APP))).mode & 0o777).to.equal(0o640);
    const audit = await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8');
    expect(audit).to.contain(file.backupPath);
    expect(audit).to.contain(answer.body.operationId);
  });

  it('writes nothing when the content is already live: same inode and mtime, no backup, "unchanged"', async () => {
    await node.write(APP, 'same\n');
    const before = await stat(node.abs(APP));
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'same\n' },
    ]);
    expect(answer.body).to.include({ outcome: 'unchanged' });
    expect(answer.body.files[0]).to.include({ state: 'unchanged', backupPath: null, diff: '' });
    const after = await stat(node.abs(APP));
    expect([after.ino, after.mtimeMs]).to.deep.equal([before.ino, before.mtimeMs]);
    expect(await backupsOf('fixture')).to.deep.equal([]);
  });

  it('refuses a stale fingerprint with 412 carrying the live sha, writing nothing', async () => {
    await node.write(APP, 'live\n');
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'new\n', expectedSha256: sha256('planned\n') },
    ]);
    expect([answer.status, answer.body.error.code, answer.body.error.liveSha256]).to.deep.equal([
      412,
      'PRECONDITION_FAILED',
      sha256('live\n'),
    ]);
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('live\n');
    expect(await backupsOf('fixture')).to.deep.equal([]);
  });

  it('refuses a missing secret before writing anything (SECRET_MISSING, names only)', async () => {
    await node.write(APP, 'live\n');
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'x\n' },
      { path: SECOND, fileId: 'second.conf', content: 'k={{ secret.NOT_THERE }}\n' },
    ]);
    expect([answer.status, answer.body.error.code]).to.deep.equal([422, 'SECRET_MISSING']);
    expect(answer.body.error.message).to.contain('NOT_THERE');
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('live\n');
  });

  it('refuses content over the file bound (FILE_TOO_LARGE) and a file id that does not match its path', async () => {
    const big = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'a'.repeat(1024 * 1024 + 1) },
    ]);
    expect([big.status, big.body.error.code]).to.deep.equal([413, 'FILE_TOO_LARGE']);
    const wrong = await install(node, token, 'fixture', [
      { path: APP, fileId: 'second.conf', content: 'x' },
    ]);
    expect(wrong.body.error.code).to.equal('BAD_REQUEST');
    const foreign = await install(node, token, 'fixture', [
      { path: SVC, fileId: 'svc.yaml', content: 'x' },
    ]);
    // Another domain's file is not a path the node accepts for fixture.
    expect(foreign.body.error.code).to.equal('POLICY_REFUSED');
    expect(foreign.body.error.message).to.contain('for domain fixture');
  });

  it('answers a replayed operation id with the original receipt, never executing twice', async () => {
    await node.write(APP, 'v1\n');
    const body = await installBody(node, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'v2\n' },
    ]);
    const first = await node.call('/v1/install', { token, body });
    expect(first.status).to.equal(200);
    await node.write(APP, 'changed by someone\n');
    const backups = await backupsOf('fixture');
    const replay = await node.call('/v1/install', { token, body });
    expect(replay.status).to.equal(200);
    expect(replay.body).to.deep.equal(first.body);
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('changed by someone\n');
    expect(await backupsOf('fixture')).to.deep.equal(backups);
    const other = await node.call('/v1/install', {
      token,
      body: { ...body, parameters: { x: 'y' } },
    });
    expect([other.status, other.body.error.code]).to.deep.equal([409, 'REPLAY_REJECTED']);
    const audit = await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8');
    expect(audit).to.contain('"outcome":"replayed"');
  });

  it('tells a client that lost its connection what happened to its operation', async () => {
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'x\n' },
    ]);
    const status = await node.call(`/v1/operations/${answer.body.operationId}`, { token });
    expect(status.body).to.include({ state: 'completed', operation: 'install' });
    expect(status.body.receipt).to.deep.equal(answer.body);
    const unknown = await node.call(`/v1/operations/${newId()}`, { token });
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'OPERATION_NOT_FOUND']);
  });

  it('lets exactly one of two concurrent installs of a file win; the other is LOCKED, then PRECONDITION_FAILED', async () => {
    await node.write(APP, 'original\n');
    const expected = sha256('original\n');
    const a = await installBody(node, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'from A\n' },
    ]);
    const b = await installBody(node, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'from B\n' },
    ]);
    await withFailpoint('install.before_rename:sleep(1500)', async () => {
      const first = node.call('/v1/install', { token, body: a });
      await waitForFile(dirname(node.abs(APP)), `.fleet-tmp-${a.operationId}`);
      const second = await node.call('/v1/install', { token, body: b });
      expect([second.status, second.body.error.code]).to.deep.equal([423, 'LOCKED']);
      expect((await first).status).to.equal(200);
    });
    const retry = await node.call('/v1/install', { token, body: { ...b, operationId: newId() } });
    expect([retry.status, retry.body.error.code]).to.deep.equal([412, 'PRECONDITION_FAILED']);
    expect(retry.body.error.liveSha256).to.equal(sha256('from A\n'));
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('from A\n');
    const [backup] = await backupsOf('fixture');
    expect(
      sha256(await readFile(join(node.home, STATE, 'backups', 'fixture', backup as string))),
    ).to.equal(expected);
  });

  it('never lets two simultaneous installs both succeed', async () => {
    await node.write(APP, 'original\n');
    const bodies = await Promise.all(
      ['A', 'B', 'C'].map((n) =>
        installBody(node, 'fixture', [{ path: APP, fileId: 'app.conf', content: `from ${n}\n` }]),
      ),
    );
    const answers = await Promise.all(
      bodies.map((body) => node.call('/v1/install', { token, body })),
    );
    const winners = answers.filter((answer) => answer.status === 200);
    expect(winners).to.have.length(1);
    for (const loser of answers.filter((answer) => answer.status !== 200)) {
      expect(loser.body.error.code).to.be.oneOf(['LOCKED', 'PRECONDITION_FAILED']);
    }
    expect(await readFile(node.abs(APP), 'utf8')).to.equal(
      `from ${winners[0]?.body.files[0].afterSha256 === sha256('from A\n') ? 'A' : winners[0]?.body.files[0].afterSha256 === sha256('from B\n') ? 'B' : 'C'}\n`,
    );
  });

  it('restores the file when the coupled action fails, and says so (rolled-back receipt)', async () => {
    await node.write(SVC, 'port: 1\n', 0o644);
    const before = await stat(node.abs(SVC));
    const answer = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'port: 2\n' }],
      {
        parameters: { action: 'fail' },
      },
    );
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body).to.include({ outcome: 'rolled-back', verified: false });
    expect(answer.body.error.code).to.equal('ACTION_FAILED');
    expect(answer.body.files[0]).to.include({ state: 'restored' });
    expect(await readFile(node.abs(SVC), 'utf8')).to.equal('port: 1\n');
    expect((await stat(node.abs(SVC))).mode & 0o777).to.equal(before.mode & 0o777);
    expect(await tempsIn(SVC)).to.deep.equal([]);
    const audit = await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8');
    expect(audit).to.contain('"outcome":"rolled-back"');
  });

  it('runs the coupled action with the write when it succeeds', async () => {
    const answer = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'port: 3\n' }],
      {
        parameters: { action: 'ok' },
      },
    );
    expect(answer.body.actions).to.deep.equal([
      { kind: 'restart', status: 'ok', detail: 'restarted' },
    ]);
    expect(answer.body.outcome).to.equal('installed');
  });

  it('removes a file it created when the action fails', async () => {
    const answer = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'port: 2\n' }],
      {
        parameters: { action: 'fail' },
      },
    );
    expect(answer.body.outcome).to.equal('rolled-back');
    expect(await lstat(node.abs(SVC)).catch(() => 'absent')).to.equal('absent');
  });

  it('does not do an operation it cannot audit (AUDIT_UNAVAILABLE): the write is undone', async () => {
    await node.write(APP, 'before\n');
    const answer = await withFailpoint('audit.before_append:throw', () =>
      install(node, token, 'fixture', [{ path: APP, fileId: 'app.conf', content: 'after\n' }]),
    );
    expect([answer.status, answer.body.error.code]).to.deep.equal([503, 'AUDIT_UNAVAILABLE']);
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('before\n');
    const body = await installBody(node, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'after\n' },
    ]);
    expect((await node.call('/v1/install', { token, body })).status).to.equal(200);
  });

  it('re-checks the token before the rename: revoked mid-install, nothing changes (AUTH_REVOKED)', async () => {
    await node.write(APP, 'before\n');
    const issued = await node.store.issue({ client: 'doomed', scopes: ['config:install'] });
    const body = await installBody(node, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'after\n' },
    ]);
    const answer = await withFailpoint('install.after_temp_write:sleep(2000)', async () => {
      const pending = node.call('/v1/install', { token: issued.token, body });
      await waitForFile(dirname(node.abs(APP)), `.fleet-tmp-${body.operationId}`);
      await node.store.revoke(issued.record.id);
      return pending;
    });
    expect([answer.status, answer.body.error.code]).to.deep.equal([401, 'AUTH_REVOKED']);
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('before\n');
    expect(await tempsIn(APP)).to.deep.equal([]);
    expect(await backupsOf('fixture')).to.deep.equal([]);
  });

  it('prunes backups to the domain count (3), oldest first, never the newest', async () => {
    await node.write(APP, 'v0\n');
    const made: string[] = [];
    for (let v = 1; v <= 5; v += 1) {
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: `v${v}\n` },
      ]);
      made.push(answer.body.files[0].backupPath.split('/').pop());
    }
    expect(await backupsOf('fixture')).to.deep.equal(made.slice(-3));
  });

  it('names backups apart even when the clock steps back, and keeps the newest', async () => {
    await node.dispose();
    const clock = new FixedClock(new Date());
    node = await startNode({ clock, limits: { clockSkewMs: 5 * 3_600_000 } });
    token = await node.issue(['config:install']);
    await node.write(APP, 'v0\n');
    const names: string[] = [];
    for (const v of [1, 2, 3, 4]) {
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: `v${v}\n` },
      ]);
      names.push(answer.body.files[0].backupPath.split('/').pop());
      clock.set(new Date(clock.now().getTime() - 3_600_000)); // an hour back each time
    }
    expect(new Set(names).size).to.equal(4);
    const kept = await backupsOf('fixture');
    expect(kept).to.have.length(3);
    expect(kept).to.include(names[3]);
  });

  it('installs several files as one operation, reporting each', async () => {
    await node.write(APP, 'a\n');
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'a\n' },
      { path: SECOND, fileId: 'second.conf', content: 'b\n' },
    ]);
    expect(answer.body.outcome).to.equal('installed');
    expect(answer.body.files.map((f: { state: string }) => f.state)).to.deep.equal([
      'unchanged',
      'written',
    ]);
  });
});
