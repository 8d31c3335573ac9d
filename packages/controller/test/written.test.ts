/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * The node's record of fleet's own writes (contract §8.2, docs/classification.md): the sha256 of
 * each content the writer renamed into place, per path, returned by the snapshot — Debian ucf's
 * hashfile, deeper — and what a restore does to it.
 */
import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { MAX_WRITES_PER_PATH } from '@fleet/core';
import { statePaths } from '../src/state-paths.js';
import { MAX_PATHS, readWritten, recordWrite } from '../src/written.js';
import { APP, SECOND, SVC } from './support/fixture-registry.js';
import { install, sha256 } from './support/install.js';
import { newId, startNode, type TestNode } from './support/node.js';

const RECORD = '.local/state/fleet/written.json';

describe('the node records what fleet wrote', () => {
  let node: TestNode;
  let token: string;
  beforeEach(async () => {
    node = await startNode();
    token = await node.issue(['config:install', 'config:read']);
  });
  afterEach(async () => node.dispose());

  const snapshot = async (paths: string[], domain = 'fixture') => {
    const files = paths.map((path) => ({ domain, path }));
    const answer = await node.call('/v1/snapshot', { token, body: { files, backups: true } });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.files;
  };
  const put = async (content: string, path = APP, fileId = 'app.conf') => {
    const answer = await install(node, token, 'fixture', [{ path, fileId, content }]);
    expect(answer.status, answer.text).to.equal(200);
    return answer.body;
  };

  it('keeps the sha256 of each content written, newest first, with time and operation (ucf hashfile)', async () => {
    const first = await put('v1\n');
    const second = await put('v2 {{ secret.CANARY }}\n');
    const [app, other] = await snapshot([APP, SECOND]);
    // The bytes written: the secret resolved on the node, so the record equals the live sha256.
    expect(app.sha256).to.equal(sha256(`v2 ${node.canary}\n`));
    expect(app.writes.map((w: { sha256: string }) => w.sha256)).to.deep.equal([
      sha256(`v2 ${node.canary}\n`),
      sha256('v1\n'),
    ]);
    expect(app.writes.map((w: { operationId: string }) => w.operationId)).to.deep.equal([
      second.operationId,
      first.operationId,
    ]);
    expect(Date.parse(app.writes[0].at)).to.be.a('number').and.not.NaN;
    // A path fleet never wrote has an empty record (the operator reads `missing`, not `deleted`).
    expect(other).to.deep.equal({ path: SECOND, state: 'absent', backups: [], writes: [] });
    const file = await stat(join(node.home, RECORD));
    expect(file.mode & 0o777).to.equal(0o600);
    expect((await stat(join(node.home, '.local/state/fleet'))).mode & 0o777).to.equal(0o700);
    expect(await readFile(join(node.home, RECORD), 'utf8')).to.not.contain(node.canary);
  });

  it('keeps the record of a file the user deleted (what tells deleted from missing)', async () => {
    const receipt = await put('v1\n');
    await rm(node.abs(APP));
    const [app] = await snapshot([APP]);
    expect(app).to.include({ state: 'absent' });
    expect(app.writes).to.have.length(1);
    expect(app.writes[0]).to.include({ sha256: sha256('v1\n'), operationId: receipt.operationId });
  });

  it('differs from ucf on purpose: an install that finds the content already live records nothing', async () => {
    await node.write(APP, 'hand-made\n');
    const receipt = await put('hand-made\n');
    expect(receipt.outcome).to.equal('unchanged');
    const [app] = await snapshot([APP]);
    expect(app.writes).to.deep.equal([]);
  });

  it('a content written again moves to the front and keeps the operation that first wrote it', async () => {
    const first = await put('v1\n');
    await put('v2\n');
    await put('v1\n');
    const [app] = await snapshot([APP]);
    expect(app.writes.map((w: { sha256: string }) => w.sha256)).to.deep.equal([
      sha256('v1\n'),
      sha256('v2\n'),
    ]);
    expect(app.writes[0].operationId).to.equal(first.operationId);
  });

  it("keeps the mode each content was written with, as chezmoi keeps a target's last-written mode (contract §10.4)", async () => {
    await put('v1\n');
    const [app] = await snapshot([APP]);
    // A new file of a plugin's domain is 0600 (the writer's default), and the record says so.
    expect(app.writes[0].mode).to.equal('0600');
    await chmod(node.abs(APP), 0o640);
    await put('v2\n');
    const [after] = await snapshot([APP]);
    // A replaced file keeps its mode: the record is of the mode fleet wrote, 0640 here.
    expect(after.writes.map((w: { mode?: string }) => w.mode)).to.deep.equal(['0640', '0600']);
  });

  it(`keeps ${MAX_WRITES_PER_PATH} contents per path, the oldest first out`, async () => {
    for (let i = 0; i < MAX_WRITES_PER_PATH + 2; i += 1) await put(`v${i}\n`);
    const [app] = await snapshot([APP]);
    expect(app.writes).to.have.length(MAX_WRITES_PER_PATH);
    expect(app.writes[0].sha256).to.equal(sha256(`v${MAX_WRITES_PER_PATH + 1}\n`));
    expect(app.writes.at(-1).sha256).to.equal(sha256('v2\n'));
  });

  it('a restore records nothing and withdraws the write it undid: a rolled-back new file has no record', async () => {
    const answer = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'port: 2\n' }],
      { parameters: { action: 'fail' } },
    );
    expect(answer.body.outcome).to.equal('rolled-back');
    const [svc] = await snapshot([SVC], 'coupled');
    expect(svc).to.deep.equal({ path: SVC, state: 'absent', backups: [], writes: [] });
  });

  it("a restore puts a backup back without counting the backup's content as fleet's", async () => {
    const ok = await install(node, token, 'coupled', [
      { path: SVC, fileId: 'svc.yaml', content: 'port: 1\n' },
    ]);
    expect(ok.body.outcome).to.equal('installed');
    // A hand edit, then an install that fails its coupled action and restores the hand edit.
    await node.write(SVC, 'port: 1 # mine\n');
    const failed = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'port: 2\n' }],
      { parameters: { action: 'fail' } },
    );
    expect(failed.body.outcome).to.equal('rolled-back');
    const [svc] = await snapshot([SVC], 'coupled');
    expect(svc.content).to.equal('port: 1 # mine\n');
    expect(svc.writes.map((w: { sha256: string }) => w.sha256)).to.deep.equal([
      sha256('port: 1\n'),
    ]);
  });

  it('refuses every file of a snapshot when the record is open to others (RECOVERY_REQUIRED)', async () => {
    await put('v1\n');
    await chmod(join(node.home, RECORD), 0o644);
    const files = await snapshot([APP, SECOND]);
    for (const file of files) {
      expect(file).to.include({ state: 'refused', code: 'RECOVERY_REQUIRED' });
      expect(file.message).to.contain('written.json');
    }
  });

  it('undoes an install it cannot record: a damaged record rolls the write back', async () => {
    await node.write(APP, 'before\n');
    await writeFile(join(node.home, RECORD), '{"version":1,"paths":{"~/x":"nope"}}\n', {
      mode: 0o600,
    });
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'after\n' },
    ]);
    expect(answer.body, answer.text).to.include({ outcome: 'rolled-back' });
    expect(answer.body.error.code).to.equal('RECOVERY_REQUIRED');
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('before\n');
  });

  it('never reads the record through a symlink', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'fleet-written-'));
    try {
      const forged = join(elsewhere, 'forged.json');
      await writeFile(
        forged,
        JSON.stringify({
          version: 1,
          paths: {
            [APP]: [{ sha256: sha256('x\n'), at: new Date().toISOString(), operationId: newId() }],
          },
        }),
        { mode: 0o600 },
      );
      await put('v1\n');
      await rm(join(node.home, RECORD));
      await symlink(forged, join(node.home, RECORD));
      const [app] = await snapshot([APP]);
      expect(app).to.include({ state: 'refused', code: 'RECOVERY_REQUIRED' });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('the record of writes, kept between snapshots while its file is unchanged', () => {
  let node: TestNode;
  let token: string;
  beforeEach(async () => {
    node = await startNode();
    token = await node.issue(['config:install', 'config:read']);
  });
  afterEach(async () => node.dispose());

  const app = async () => {
    const answer = await node.call('/v1/snapshot', {
      token,
      body: { files: [{ domain: 'fixture', path: APP }], backups: false },
    });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.files[0];
  };
  const put = async (content: string) => {
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content },
    ]);
    expect(answer.status, answer.text).to.equal(200);
  };
  const shas = (file: { writes: { sha256: string }[] }) => file.writes.map((w) => w.sha256);

  it('answers the same record again, and a new one once fleet writes', async () => {
    await put('v1\n');
    expect(shas(await app())).to.deep.equal([sha256('v1\n')]);
    expect(shas(await app())).to.deep.equal([sha256('v1\n')]);
    await put('v2\n');
    expect(shas(await app())).to.deep.equal([sha256('v2\n'), sha256('v1\n')]);
  });

  it('refuses a record read before once it is opened to others, and takes it back once private', async () => {
    await put('v1\n');
    expect(await app()).to.include({ state: 'present' });
    await chmod(join(node.home, RECORD), 0o644);
    expect(await app()).to.include({ state: 'refused', code: 'RECOVERY_REQUIRED' });
    await chmod(join(node.home, RECORD), 0o600);
    expect(shas(await app())).to.deep.equal([sha256('v1\n')]);
  });

  it('reads a record replaced behind its back: a rewrite with the same size, a symlink', async () => {
    await put('v1\n');
    const before = await readFile(join(node.home, RECORD), 'utf8');
    expect(shas(await app())).to.deep.equal([sha256('v1\n')]);
    // The same length, another content: only the file's times and inode tell it changed.
    const forged = before.replace(sha256('v1\n'), sha256('v9\n'));
    expect(forged.length).to.equal(before.length);
    await writeFile(join(node.home, RECORD), forged, { mode: 0o600 });
    expect(shas(await app())).to.deep.equal([sha256('v9\n')]);
    const elsewhere = await mkdtemp(join(tmpdir(), 'fleet-written-'));
    try {
      await writeFile(join(elsewhere, 'forged.json'), before, { mode: 0o600 });
      await rm(join(node.home, RECORD));
      await symlink(join(elsewhere, 'forged.json'), join(node.home, RECORD));
      expect(await app()).to.include({ state: 'refused', code: 'RECOVERY_REQUIRED' });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('the record of writes, bounded in paths', () => {
  it(`keeps ${MAX_PATHS} paths, the least recently written first out`, async () => {
    const home = await mkdtemp(join(tmpdir(), 'fleet-written-'));
    try {
      const state = statePaths(home);
      const at = new Date().toISOString();
      const entry = (i: number) => [{ sha256: sha256(`c${i}`), at, operationId: newId() }];
      const paths = Object.fromEntries(
        Array.from({ length: MAX_PATHS }, (_, i) => [`~/.config/p${i}`, entry(i)]),
      );
      await recordWrite(state, '~/.config/p0', entry(0)[0] as never);
      await writeFile(state.written, JSON.stringify({ version: 1, paths }), { mode: 0o600 });
      // p0 written again: now the most recent; p1 is the least recently written.
      await recordWrite(state, '~/.config/p0', entry(0)[0] as never);
      await recordWrite(state, '~/.config/new', entry(-1)[0] as never);
      const record = await readWritten(state);
      expect(record.size).to.equal(MAX_PATHS);
      expect(record.has('~/.config/p1')).to.equal(false);
      expect(record.has('~/.config/p0')).to.equal(true);
      expect(record.has('~/.config/new')).to.equal(true);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
