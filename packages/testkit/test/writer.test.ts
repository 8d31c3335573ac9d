import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { stat, symlink } from 'node:fs/promises';
import { isFleetError, type DomainDeclaration } from '@fleet/core';
import { createFakeHost, type FakeHost } from '../src/index.js';

const domain: DomainDeclaration = {
  domain: 'dotfile',
  description: 'a test domain',
  files: [{ id: 'rc', path: '~/.dotrc', canonical: 'rc', kind: 'whole', format: 'text' }],
  derivedPaths: [
    {
      id: 'copy',
      path: '~/.cache/dot/rc',
      format: 'text',
      derivedFrom: 'rc',
      description: 'a copy',
    },
  ],
  hostVariables: [],
  coupling: { kind: 'none' },
};
const bytes = (text: string) => new TextEncoder().encode(text);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('FakeHost.writer (TempHomeWriter)', () => {
  let host: FakeHost;
  beforeEach(async () => {
    host = await createFakeHost();
  });
  afterEach(() => host.dispose());

  it('creates, replaces with a 0600 backup, and leaves equal content untouched', async () => {
    const writer = host.writer(domain);
    expect(await writer.read('~/.dotrc')).to.equal(null);
    const created = await writer.replace({
      path: '~/.dotrc',
      expectedSha256: null,
      content: bytes('one\n'),
    });
    expect(created).to.include({
      beforeSha256: null,
      afterSha256: sha256('one\n'),
      backupPath: null,
      unchanged: false,
    });
    const replaced = await writer.replace({
      path: '~/.dotrc',
      expectedSha256: sha256('one\n'),
      content: bytes('two\n'),
    });
    expect(await host.readText('~/.dotrc')).to.equal('two\n');
    expect(await host.readText(replaced.backupPath ?? '~/none')).to.equal('one\n');
    expect((await stat(host.resolve(replaced.backupPath ?? '~/none'))).mode & 0o777).to.equal(
      0o600,
    );
    const inode = (await stat(host.resolve('~/.dotrc'))).ino;
    const same = await writer.replace({
      path: '~/.dotrc',
      expectedSha256: sha256('two\n'),
      content: bytes('two\n'),
    });
    expect(same).to.include({ unchanged: true, backupPath: null });
    expect((await stat(host.resolve('~/.dotrc'))).ino).to.equal(inode);
    expect(writer.results).to.have.length(3);
  });

  it('compares and swaps: a stale expected sha256 writes nothing', async () => {
    await host.writeFile('~/.dotrc', 'live\n');
    const writer = host.writer(domain);
    expect(
      await codeOf(() =>
        writer.replace({ path: '~/.dotrc', expectedSha256: null, content: bytes('x') }),
      ),
    ).to.equal('PRECONDITION_FAILED');
    expect(await host.readText('~/.dotrc')).to.equal('live\n');
  });

  it('restores the backed-up bytes, or removes a file the replace created', async () => {
    await host.writeFile('~/.dotrc', 'old\n');
    const writer = host.writer(domain);
    const replaced = await writer.replace({
      path: '~/.dotrc',
      expectedSha256: sha256('old\n'),
      content: bytes('new\n'),
    });
    const created = await writer.replace({
      path: '~/.cache/dot/rc',
      expectedSha256: null,
      content: bytes('copy\n'),
    });
    await writer.restore(created);
    await writer.restore(replaced);
    expect(await host.readText('~/.dotrc')).to.equal('old\n');
    expect(await host.exists('~/.cache/dot/rc')).to.equal(false);
    expect(writer.restored).to.deep.equal([created, replaced]);
  });

  it('refuses paths the domain does not declare, and symlinks', async () => {
    const writer = host.writer(domain);
    expect(await codeOf(() => writer.read('~/.bashrc'))).to.equal('PATH_OUTSIDE_ROOT');
    expect(
      await codeOf(() =>
        writer.replace({ path: '~/.bashrc', expectedSha256: null, content: bytes('x') }),
      ),
    ).to.equal('PATH_OUTSIDE_ROOT');
    await host.writeFile('~/.target', 'secret\n');
    await symlink(host.resolve('~/.target'), host.resolve('~/.dotrc'));
    expect(await codeOf(() => writer.read('~/.dotrc'))).to.equal('SYMLINK_REFUSED');
  });

  it('injects a failure on request', async () => {
    const writer = host.writer(domain, { failReplaceOf: '~/.dotrc' });
    expect(
      await codeOf(() =>
        writer.replace({ path: '~/.dotrc', expectedSha256: null, content: bytes('x') }),
      ),
    ).to.equal('IO_ERROR');
    expect(await host.exists('~/.dotrc')).to.equal(false);
  });
});
