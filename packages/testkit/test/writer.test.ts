import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { stat, symlink } from 'node:fs/promises';
import { isFleetError, type DomainDeclaration } from '@fleet/core';
import {
  createFakeHost,
  type FakeHost,
  type HomeWriterFactory,
  type HomeWriterRequest,
} from '../src/index.js';

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

  it('refuses paths the domain does not declare (nor its node policy lists), fleet state, and symlinks', async () => {
    const writer = host.writer(domain);
    expect(await codeOf(() => writer.read('~/.bashrc'))).to.equal('POLICY_REFUSED');
    expect(
      await codeOf(() =>
        writer.replace({ path: '~/.bashrc', expectedSha256: null, content: bytes('x') }),
      ),
    ).to.equal('POLICY_REFUSED');
    expect(await codeOf(() => writer.read('~/.config/fleet/env'))).to.equal('PATH_OUTSIDE_ROOT');
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

  it("delegates to an injected writer factory instead of the controller's", async () => {
    const requests: HomeWriterRequest[] = [];
    const writes: string[] = [];
    const createWriter: HomeWriterFactory = (request) => {
      requests.push(request);
      return Promise.resolve({
        read: () => Promise.resolve(null),
        replace: (replace) => {
          writes.push(replace.path);
          return Promise.resolve({
            path: replace.path,
            beforeSha256: null,
            afterSha256: sha256('x'),
            backupPath: null,
            unchanged: false,
          });
        },
        restore: () => Promise.resolve(),
      });
    };
    const writer = host.writer(domain, { createWriter, operationId: '01JQ0000000000000000000000' });
    const result = await writer.replace({
      path: '~/.dotrc',
      expectedSha256: null,
      content: bytes('x'),
    });
    expect(writes).to.deep.equal(['~/.dotrc']);
    expect(writer.results).to.deep.equal([result]);
    expect(requests).to.have.length(1);
    expect(requests[0]).to.include({
      home: host.home,
      domain: 'dotfile',
      operationId: '01JQ0000000000000000000000',
    });
    expect(requests[0]?.declarations.map((d) => d.domain)).to.deep.equal(['dotfile']);
    // Nothing reached the home: the controller's writer was never made.
    expect(await host.exists('~/.dotrc')).to.equal(false);
    expect(await host.exists('~/.local/state/fleet')).to.equal(false);
  });
});

describe('FakeHost with a node policy (createFakeHost({ policy }))', () => {
  let host: FakeHost;
  afterEach(() => host.dispose());

  it('writes the policy file 0600 and hands writers its per-host paths and symlinkInto', async () => {
    host = await createFakeHost({
      policy: {
        domains: { dotfile: { paths: { copy: ['~/.cache/moved/*'] } } },
        symlinkInto: ['~/dotfiles'],
      },
    });
    expect((await stat(host.resolve('~/.config/fleet/node-policy.yaml'))).mode & 0o777).to.equal(
      0o600,
    );
    const writer = host.writer(domain);
    await writer.replace({
      path: '~/.cache/moved/rc',
      expectedSha256: null,
      content: bytes('m\n'),
    });
    expect(await host.readText('~/.cache/moved/rc')).to.equal('m\n');
    expect(await codeOf(() => writer.read('~/.cache/elsewhere/rc'))).to.equal('POLICY_REFUSED');

    await host.writeFile('~/dotfiles/rc', 'linked\n');
    await symlink('dotfiles/rc', host.resolve('~/.dotrc'));
    await writer.replace({
      path: '~/.dotrc',
      expectedSha256: sha256('linked\n'),
      content: bytes('written through\n'),
    });
    expect(await host.readText('~/dotfiles/rc')).to.equal('written through\n');
  });

  it("runs a served domain's actions as a node does, and refuses what the policy does not define", async () => {
    host = await createFakeHost({
      policy: {
        domains: {
          dotfile: { actions: { 'reload-rc': { argv: ['/usr/bin/rcctl', 'reload'] } } },
        },
      },
    });
    host.processes.on('/usr/bin/rcctl reload', { exitCode: 0, stdout: 'kept on the node' });
    const ctx = host.forDomain('dotfile');
    const run = await ctx.actions?.run('reload-rc');
    expect(run).to.deep.equal({
      id: 'reload-rc',
      argv: ['/usr/bin/rcctl', 'reload'],
      exitCode: 0,
      timedOut: false,
    });
    expect(host.processes.calls[0]).to.deep.include({
      command: '/usr/bin/rcctl',
      timeoutMs: 10_000,
    });
    expect(host.actionRuns).to.deep.equal([run]);
    expect(await codeOf(async () => ctx.actions?.run('rm-rf'))).to.equal('POLICY_REFUSED');
    expect(await codeOf(() => Promise.resolve().then(() => host.forDomain('router')))).to.equal(
      'DOMAIN_NOT_SERVED',
    );
    expect(
      await codeOf(async () => host.writer({ ...domain, domain: 'other' }).read('~/.x')),
    ).to.equal('DOMAIN_NOT_SERVED');
  });
});
