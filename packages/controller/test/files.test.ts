/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/** Reads and the allowlist (contract §5, §9; catalogue B11, B12, B17, B18, E36, F41). */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  rm,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { APP, SECOND, SVC } from './support/fixture-registry.js';
import { newId, startNode, type TestNode } from './support/node.js';

const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('reading managed files', () => {
  let node: TestNode;
  let read: string;
  let adopt: string;
  let outside: string;
  before(async () => {
    node = await startNode();
    read = await node.issue(['config:read', 'config:install']);
    adopt = await node.issue(['config:adopt']);
    outside = await mkdtemp(join(tmpdir(), 'fleet-outside-'));
  });
  after(async () => {
    await node.dispose();
    await rm(outside, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await rm(join(node.home, '.config', 'fixture'), { recursive: true, force: true });
    await rm(join(node.home, '.config', 'coupled'), { recursive: true, force: true });
  });

  const exportOf = (path: string, token = read) =>
    node.call('/v1/export', { token, body: { path } });

  it('exports a file redacted: the canary is back to its placeholder, the sha is of the live bytes', async () => {
    const live = `user=app\npassword=${node.canary}\nurl=postgres://u:${node.canary}@h/db\nother=p@ss word\n`;
    await node.write(APP, live);
    const answer = await exportOf(APP);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body).to.include({
      exists: true,
      sha256: sha256(live),
      redacted: true,
      domain: 'fixture',
      fileId: 'app.conf',
    });
    expect(answer.body.content).to.equal(
      'user=app\npassword={{ secret.CANARY }}\nurl=postgres://u:{{ secret.CANARY }}@h/db\nother={{ secret.DB_PASSWORD }}\n',
    );
    expect(answer.text).to.not.contain(node.canary);
  });

  it('says a missing file does not exist', async () => {
    const answer = await exportOf(APP);
    expect(answer.body).to.include({ exists: false, path: APP });
  });

  it('refuses a path no domain declares (PATH_OUTSIDE_ROOT)', async () => {
    await node.write('~/.ssh/id_rsa', 'PRIVATE');
    const answer = await exportOf('~/.ssh/id_rsa');
    expect([answer.status, answer.body.error.code]).to.deep.equal([403, 'PATH_OUTSIDE_ROOT']);
    expect(answer.text).to.not.contain('PRIVATE');
  });

  it('refuses a managed file that is a symlink to /etc/passwd: not read, not replaced, link untouched', async () => {
    await mkdir(join(node.home, '.config', 'fixture'), { recursive: true });
    await symlink('/etc/passwd', node.abs(APP));
    const before = await lstat(node.abs(APP));
    const passwd = sha256(await readFile('/etc/passwd'));
    const exported = await exportOf(APP);
    expect([exported.status, exported.body.error.code]).to.deep.equal([409, 'SYMLINK_REFUSED']);
    expect(exported.text).to.not.contain('root:');
    const captured = await node.call('/v1/capture', {
      token: adopt,
      body: { operationId: newId(), path: APP },
    });
    expect(captured.body.error.code).to.equal('SYMLINK_REFUSED');
    const installed = await node.call('/v1/install', {
      token: read,
      body: {
        operationId: newId(),
        domain: 'fixture',
        files: [{ fileId: 'app.conf', path: APP, expectedSha256: passwd, content: 'pwned\n' }],
        parameters: {},
      },
    });
    expect(installed.body.error.code).to.equal('SYMLINK_REFUSED');
    const after = await lstat(node.abs(APP));
    expect([after.ino, after.isSymbolicLink(), await readlink(node.abs(APP))]).to.deep.equal([
      before.ino,
      true,
      '/etc/passwd',
    ]);
    expect(sha256(await readFile('/etc/passwd'))).to.equal(passwd);
  });

  it('refuses a parent directory that is a symlink out of the home (PATH_OUTSIDE_ROOT), writing nothing there', async () => {
    await writeFile(join(outside, 'app.conf'), 'outside\n');
    await mkdir(join(node.home, '.config'), { recursive: true });
    await symlink(outside, join(node.home, '.config', 'fixture'));
    const exported = await exportOf(APP);
    expect([exported.status, exported.body.error.code]).to.deep.equal([403, 'PATH_OUTSIDE_ROOT']);
    const installed = await node.call('/v1/install', {
      token: read,
      body: {
        operationId: newId(),
        domain: 'fixture',
        files: [{ fileId: 'second.conf', path: SECOND, expectedSha256: null, content: 'new\n' }],
        parameters: {},
      },
    });
    expect(installed.body.error.code).to.equal('PATH_OUTSIDE_ROOT');
    expect(await readFile(join(outside, 'app.conf'), 'utf8')).to.equal('outside\n');
    expect(await lstat(join(outside, 'second.conf')).catch(() => 'absent')).to.equal('absent');
  });

  it('refuses a parent symlink that stays inside the home (SYMLINK_REFUSED)', async () => {
    await mkdir(join(node.home, 'elsewhere'), { recursive: true });
    await writeFile(join(node.home, 'elsewhere', 'app.conf'), 'x\n');
    await mkdir(join(node.home, '.config'), { recursive: true });
    await symlink(join(node.home, 'elsewhere'), join(node.home, '.config', 'fixture'));
    expect((await exportOf(APP)).body.error.code).to.equal('SYMLINK_REFUSED');
  });

  it('refuses a directory or a FIFO where a file is expected (NOT_REGULAR_FILE), without hanging', async () => {
    await mkdir(node.abs(APP), { recursive: true });
    expect((await exportOf(APP)).body.error.code).to.equal('NOT_REGULAR_FILE');
    await mkdir(join(node.home, '.config', 'coupled'), { recursive: true });
    execFileSync('mkfifo', [node.abs(SVC)]);
    expect((await exportOf(SVC)).body.error.code).to.equal('NOT_REGULAR_FILE');
  });

  it('refuses a file over the bound (FILE_TOO_LARGE), decided from fstat — also a 5 GiB sparse file', async () => {
    await node.write(APP, Buffer.alloc(1024 * 1024 + 1, 0x61));
    const big = await exportOf(APP);
    expect([big.status, big.body.error.code]).to.deep.equal([413, 'FILE_TOO_LARGE']);
    await truncate(node.abs(APP), 5 * 1024 ** 3);
    expect((await exportOf(APP)).body.error.code).to.equal('FILE_TOO_LARGE');
  });

  it('refuses binary content (FORMAT_UNSUPPORTED) and non-UTF-8 (ENCODING_INVALID), exporting nothing', async () => {
    await node.write(APP, Buffer.from('a\u0000b'));
    const binary = await exportOf(APP);
    expect([binary.status, binary.body.error.code]).to.deep.equal([415, 'FORMAT_UNSUPPORTED']);
    await node.write(APP, Buffer.from([0xff, 0xfe, 0x61, 0x00])); // UTF-16LE with BOM
    expect((await exportOf(APP)).body.error.code).to.equal('FORMAT_UNSUPPORTED');
    await node.write(APP, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])); // Latin-1 "café"
    const latin1 = await exportOf(APP);
    expect([latin1.status, latin1.body.error.code]).to.deep.equal([422, 'ENCODING_INVALID']);
    expect(latin1.body).to.not.have.property('content');
  });

  it('keeps a UTF-8 BOM, CRLF and a missing final newline byte for byte', async () => {
    const live = '\ufeffa=1\r\nb=2';
    await node.write(APP, live);
    const answer = await exportOf(APP);
    expect(answer.body.content).to.equal(live);
    expect(answer.body.sha256).to.equal(sha256(Buffer.from(live)));
  });

  it('inventories every declared file with size, mtime, sha256 and format, flagging the unreadable', async () => {
    await node.write(APP, 'hello\n');
    await node.write(SECOND, Buffer.from('a\u0000b'));
    const answer = await node.call('/v1/inventory', { token: read });
    expect(answer.status).to.equal(200);
    const byPath = Object.fromEntries(answer.body.files.map((f: { path: string }) => [f.path, f]));
    expect(byPath[APP]).to.include({
      exists: true,
      size: 6,
      sha256: sha256('hello\n'),
      format: 'text',
      kind: 'file',
    });
    expect(byPath[SECOND].error.code).to.equal('FORMAT_UNSUPPORTED');
    expect(byPath[SVC]).to.include({ exists: false });
    expect(byPath['~/.config/declared/x.md']).to.include({ exists: false, domain: 'declared' });
  });

  it('snapshots several files in one request: redacted, with backups newest first, refusals per file', async () => {
    await node.write(APP, `v1 ${node.canary}\n`);
    for (const content of ['v2 {{ secret.CANARY }}\n', 'v3\n']) {
      const live = await node.read(APP);
      const answer = await node.call('/v1/install', {
        token: read,
        body: {
          operationId: newId(),
          domain: 'fixture',
          files: [
            { fileId: 'app.conf', path: APP, expectedSha256: sha256(live as Buffer), content },
          ],
          parameters: {},
        },
      });
      expect(answer.status, answer.text).to.equal(200);
    }
    await node.write(SECOND, Buffer.from('bin\u0000'));
    const answer = await node.call('/v1/snapshot', {
      token: read,
      body: {
        files: [
          { domain: 'fixture', path: APP },
          { domain: 'fixture', path: SECOND },
          { domain: 'coupled', path: SVC },
          { domain: 'fixture', path: '~/.ssh/id_rsa' },
          { domain: 'fixture', path: '~/.config/fleet/env' },
          { domain: 'router', path: '~/.config/router/router.yaml' },
        ],
        backups: true,
      },
    });
    expect(answer.status, answer.text).to.equal(200);
    const [app, second, svc, ssh, env, router] = answer.body.files;
    expect(app).to.include({ state: 'present', content: 'v3\n' });
    expect(app.backups.map((b: { content: string }) => b.content)).to.deep.equal([
      'v2 {{ secret.CANARY }}\n',
      'v1 {{ secret.CANARY }}\n',
    ]);
    expect(second).to.include({ state: 'refused', code: 'FORMAT_UNSUPPORTED' });
    expect(svc).to.deep.equal({ path: SVC, state: 'absent', backups: [], writes: [] });
    // Not a path the node policy accepts for fixture; fleet's own env file, never; a domain this
    // node lacks: named as such.
    expect(ssh).to.include({ state: 'refused', code: 'POLICY_REFUSED' });
    expect(env).to.include({ state: 'refused', code: 'PATH_OUTSIDE_ROOT' });
    expect(router).to.include({ state: 'refused', code: 'DOMAIN_NOT_SERVED' });
    expect(router.message).to.contain('no plugin on this node provides it');
    expect(answer.text).to.not.contain(node.canary);
  });

  it('answers a file that is not text by its sha256 when asked for bytes (a files source that is bytes), never its content', async () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]); // Latin-1 "café"
    const binary = Buffer.from('bin\u0000');
    await node.write(APP, latin1);
    await node.write(SECOND, binary);
    const answer = await node.call('/v1/snapshot', {
      token: read,
      body: {
        files: [
          { domain: 'fixture', path: APP, bytes: true },
          { domain: 'fixture', path: SECOND, bytes: true },
        ],
        backups: false,
      },
    });
    expect(answer.status, answer.text).to.equal(200);
    const [app, second] = answer.body.files;
    expect(app).to.include({ state: 'present', binary: true, content: '', sha256: sha256(latin1) });
    expect(app.size).to.equal(5);
    expect(second).to.include({ state: 'present', binary: true, sha256: sha256(binary) });
    // Not asked for bytes: refused as before (a domain's own files are text).
    const plain = await node.call('/v1/snapshot', {
      token: read,
      body: { files: [{ domain: 'fixture', path: APP }], backups: false },
    });
    expect(plain.body.files[0]).to.include({ state: 'refused', code: 'ENCODING_INVALID' });
  });

  it("refuses bytes (encoding: base64) for a domain's own declared files, writing nothing", async () => {
    await node.write(APP, 'kept\n');
    const answer = await node.call('/v1/install', {
      token: read,
      body: {
        operationId: newId(),
        domain: 'fixture',
        files: [
          {
            fileId: 'app.conf',
            path: APP,
            expectedSha256: null,
            content: Buffer.from([0xe9]).toString('base64'),
            encoding: 'base64',
          },
        ],
        parameters: {},
      },
    });
    expect([answer.status, answer.body.error.code]).to.deep.equal([400, 'BAD_REQUEST']);
    expect(answer.body.error.message).to.contain('byte encoding');
    expect((await node.read(APP))?.toString('utf8')).to.equal('kept\n');
  });

  it('captures a file for adopt: redacted, audited under the operation id, the id single-use', async () => {
    await node.write(APP, `token=${node.canary}\n`);
    const id = newId();
    const first = await node.call('/v1/capture', {
      token: adopt,
      body: { operationId: id, path: APP },
    });
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.include({
      operationId: id,
      host: 'node-01',
      content: 'token={{ secret.CANARY }}\n',
      redacted: true,
    });
    expect(first.body.controller).to.match(/^@fleet\/controller@0\.1\.0\+/);
    const again = await node.call('/v1/capture', {
      token: adopt,
      body: { operationId: id, path: APP },
    });
    expect([again.status, again.body.error.code]).to.deep.equal([409, 'REPLAY_REJECTED']);
    const audit = await readFile(join(node.home, '.local/state/fleet/audit.jsonl'), 'utf8');
    expect(
      audit
        .split('\n')
        .filter(
          (line) =>
            line.includes(id) &&
            line.includes('"operation":"capture"') &&
            line.includes('"outcome":"ok"'),
        ),
    ).to.have.length(1);
    expect(audit).to.not.contain(node.canary);
    const missing = await node.call('/v1/capture', {
      token: adopt,
      body: { operationId: newId(), path: SECOND },
    });
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'FILE_NOT_FOUND']);
  });

  it('probes: facts redacted; a declared-only prober is DOMAIN_BEHAVIOUR_ABSENT; an unknown one 404', async () => {
    const facts = await node.call('/v1/probe', {
      token: read,
      body: { prober: 'fixture.facts', parameters: {} },
    });
    expect(facts.status, facts.text).to.equal(200);
    expect(facts.body.facts).to.deep.equal({
      canary: '{{ secret.CANARY }}',
      nested: [{ v: '{{ secret.CANARY }}' }],
    });
    expect(facts.text).to.not.contain(node.canary);
    const absent = await node.call('/v1/probe', {
      token: read,
      body: { prober: 'fixture.absent', parameters: {} },
    });
    expect([absent.status, absent.body.error.code]).to.deep.equal([501, 'DOMAIN_BEHAVIOUR_ABSENT']);
    const unknown = await node.call('/v1/probe', {
      token: read,
      body: { prober: 'nope.nope', parameters: {} },
    });
    expect(unknown.status).to.equal(404);
  });

  it('refuses to install a domain declared without an installer (DOMAIN_BEHAVIOUR_ABSENT)', async () => {
    const answer = await node.call('/v1/install', {
      token: read,
      body: {
        operationId: newId(),
        domain: 'declared',
        files: [
          { fileId: 'x.md', path: '~/.config/declared/x.md', expectedSha256: null, content: 'x' },
        ],
        parameters: {},
      },
    });
    expect([answer.status, answer.body.error.code]).to.deep.equal([501, 'DOMAIN_BEHAVIOUR_ABSENT']);
    expect(await node.read('~/.config/declared/x.md')).to.equal(undefined);
  });
});
