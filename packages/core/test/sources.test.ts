/**
 * Sources are what git holds, with their mode (issue 38; `repo/sources.ts`): a symbolic link is
 * followed within the repository (chezmoi `testdata/scripts/issue1161.txtar`), an executable
 * source is reported executable, and a source that is not UTF-8 text is refused with its path,
 * never re-encoded (Ansible's `copy` and chezmoi write the source's bytes, not a re-encoding).
 * The commit reader (drift, plan, install) and the working-tree reader (validate) agree, case by
 * case, on a real repository.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { readCanonicalSnapshot } from '../src/classify/history.js';
import { isFleetError } from '../src/errors.js';
import { createGit } from '../src/git.js';
import { checkNoLinkOnWay, promotionWritePath } from '../src/config/adopt.js';
import { decodeSource, readWorkingSource, resolveRepoLink } from '../src/repo/sources.js';

describe('sources: a symbolic link in the repository, resolved (pure)', () => {
  const cases: { link: string; target: string; path?: string; problem?: string }[] = [
    { link: 'domains/files/c06', target: 'c06-target', path: 'domains/files/c06-target' },
    { link: 'domains/files/c06', target: './sub/x', path: 'domains/files/sub/x' },
    { link: 'domains/files/c06', target: '../../dotfiles/vimrc', path: 'dotfiles/vimrc' },
    { link: 'domains/files/c06', target: '../../../etc/passwd', problem: 'outside the repository' },
    { link: 'domains/files/c06', target: '/etc/passwd', problem: 'outside the repository' },
    { link: 'domains/files/c06', target: 'C:\\Windows\\x', problem: 'outside the repository' },
    { link: 'domains/files/c06', target: '../..', problem: 'outside the repository' },
    { link: 'domains/files/c06', target: '', problem: 'not a path' },
  ];
  for (const { link, target, path, problem } of cases) {
    it(`${link} -> ${JSON.stringify(target)}: ${path ?? `refused (${problem})`}`, () => {
      const resolved = resolveRepoLink(link, target);
      if (path !== undefined) expect(resolved).to.deep.equal({ path });
      else
        expect((resolved as { problem: string }).problem)
          .to.contain(problem)
          .and.contain(link);
    });
  }
});

describe('sources: UTF-8 text, or bytes copied as they are — never re-encoded (pure)', () => {
  const cases: { name: string; bytes: number[]; text?: string; binary?: string }[] = [
    { name: 'ASCII', bytes: [0x61, 0x0a], text: 'a\n' },
    { name: 'UTF-8 with a BOM, kept', bytes: [0xef, 0xbb, 0xbf, 0x61], text: '\ufeffa' },
    { name: 'UTF-8 é', bytes: [0x63, 0x61, 0x66, 0xc3, 0xa9], text: 'café' },
    {
      name: 'Latin-1 caf\\xe9 (Ansible copy writes these bytes, never U+FFFD)',
      bytes: [0x63, 0x61, 0x66, 0xe9],
      binary: 'is not valid UTF-8 (the first invalid byte is at offset 3)',
    },
    {
      name: 'a NUL byte (a binary file, as chezmoi copies one)',
      bytes: [0x89, 0x50, 0x4e, 0x47, 0x00],
      binary: 'holds binary content (a NUL byte at offset 4)',
    },
    {
      name: 'UTF-16 (NUL bytes)',
      bytes: [0xff, 0xfe, 0x61, 0x00],
      binary: 'holds binary content',
    },
  ];
  for (const { name, bytes, text, binary } of cases) {
    it(`${name}: ${text === undefined ? 'bytes, kept as they are' : 'text'}`, () => {
      const decoded = decodeSource(Uint8Array.from(bytes), 'domains/files/x');
      if (text !== undefined) expect(decoded).to.deep.equal({ text });
      else {
        const got = decoded as { bytes: Uint8Array; binary: string };
        expect([...got.bytes]).to.deep.equal(bytes);
        expect(got.binary).to.contain('domains/files/x').and.contain(binary);
      }
    });
  }
});

describe('sources: a commit and the working tree read them alike (real git)', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    });
  const file = (path: string) => join(repo, ...path.split('/'));

  before(async () => {
    repo = await mkdtemp(join(tmpdir(), 'fleet-sources-'));
    git('init', '-q', '-b', 'main');
    git('config', 'core.symlinks', 'true');
    await mkdir(file('domains/files'), { recursive: true });
    await mkdir(file('dotfiles'), { recursive: true });
    await writeFile(file('domains/files/c06-target'), 'the target\n');
    await symlink('c06-target', file('domains/files/c06'));
    await writeFile(file('dotfiles/vimrc'), 'set nocompatible\n');
    await symlink('../../dotfiles/vimrc', file('domains/files/vimrc'));
    await symlink('vimrc', file('domains/files/chain'));
    await symlink('../../../etc/passwd', file('domains/files/outside'));
    await symlink('/etc/passwd', file('domains/files/absolute'));
    await symlink('loop-b', file('domains/files/loop-a'));
    await symlink('loop-a', file('domains/files/loop-b'));
    await writeFile(file('domains/files/script.sh'), '#!/bin/sh\necho hi\n');
    await chmod(file('domains/files/script.sh'), 0o755);
    await writeFile(file('domains/files/latin1'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await writeFile(file('domains/files/binary'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]));
    await writeFile(file('domains/files/plain'), 'plain\n');
    // A dotfiles checkout whose config directory is a link (`dotfiles/config -> common/config`).
    await mkdir(file('common/config/nvim'), { recursive: true });
    await writeFile(file('common/config/nvim/init.lua'), 'vim.o.number = true\n');
    await symlink('../common/config', file('dotfiles/config'));
    await symlink('config', file('dotfiles/cfg'));
    await symlink('../../etc', file('dotfiles/etc'));
    await symlink('dir-b', file('dotfiles/dir-a'));
    await symlink('dir-a', file('dotfiles/dir-b'));
    git('add', '--all');
    git('commit', '-qm', 'sources');
  });
  after(() => rm(repo, { recursive: true, force: true }));

  const cases: {
    name: string;
    path: string;
    text?: string;
    executable?: boolean;
    target?: string;
    problem?: string;
    binary?: string;
  }[] = [
    { name: 'a plain file', path: 'domains/files/plain', text: 'plain\n', executable: false },
    {
      name: 'a link to a file beside it is the file (chezmoi issue1161.txtar)',
      path: 'domains/files/c06',
      text: 'the target\n',
      executable: false,
      target: 'domains/files/c06-target',
    },
    {
      name: 'a link elsewhere in the repository',
      path: 'domains/files/vimrc',
      text: 'set nocompatible\n',
      executable: false,
      target: 'dotfiles/vimrc',
    },
    {
      name: 'a chain of links',
      path: 'domains/files/chain',
      text: 'set nocompatible\n',
      executable: false,
      target: 'dotfiles/vimrc',
    },
    {
      name: 'an executable source (100755)',
      path: 'domains/files/script.sh',
      text: '#!/bin/sh\necho hi\n',
      executable: true,
    },
    {
      name: 'a link out of the repository',
      path: 'domains/files/outside',
      problem: 'outside the repository',
    },
    { name: 'an absolute link', path: 'domains/files/absolute', problem: 'outside the repository' },
    { name: 'links that loop', path: 'domains/files/loop-a', problem: 'loop' },
    {
      name: 'a source under a linked directory is the file the link leads to (a checkout resolves it)',
      path: 'dotfiles/config/nvim/init.lua',
      text: 'vim.o.number = true\n',
      executable: false,
      target: 'common/config/nvim/init.lua',
    },
    {
      name: 'a source under a chain of linked directories',
      path: 'dotfiles/cfg/nvim/init.lua',
      text: 'vim.o.number = true\n',
      executable: false,
      target: 'common/config/nvim/init.lua',
    },
    {
      name: 'a source under a linked directory out of the repository',
      path: 'dotfiles/etc/passwd',
      problem: 'outside the repository',
    },
    {
      name: 'a source under linked directories that loop',
      path: 'dotfiles/dir-a/x',
      problem: 'loop',
    },
    {
      name: 'a Latin-1 source is its bytes, in base64',
      path: 'domains/files/latin1',
      text: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]).toString('base64'),
      executable: false,
      binary: 'is not valid UTF-8 (the first invalid byte is at offset 3)',
    },
    {
      name: 'a binary source is its bytes, in base64',
      path: 'domains/files/binary',
      text: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]).toString('base64'),
      executable: false,
      binary: 'holds binary content (a NUL byte at offset 4)',
    },
  ];

  for (const { name, path, text, executable, target, problem, binary } of cases) {
    it(`${name}: the commit and the working tree say the same`, async () => {
      const snapshot = await readCanonicalSnapshot(createGit(repo), [path]);
      const source = snapshot.sources?.get(path);
      let working: { text: string | null; source: unknown };
      try {
        const read = readWorkingSource(repo, path);
        working = { text: read.text, source: read.source };
      } catch (error) {
        if (!isFleetError(error)) throw error;
        expect(error.code).to.equal('RENDER_FAILED');
        expect(error.problems?.[0]?.file).to.equal(path);
        working = { text: null, source: { problem: error.message } };
      }
      if (problem !== undefined) {
        expect(snapshot.atRef.get(path)).to.equal(null);
        expect((source as { problem: string }).problem)
          .to.contain(path)
          .and.contain(problem);
        expect((working.source as { problem: string }).problem)
          .to.contain(path)
          .and.contain(problem);
        return;
      }
      const expected = {
        executable,
        ...(target === undefined ? {} : { target }),
        ...(binary === undefined ? {} : { binary: `${path} ${binary}` }),
      };
      expect(snapshot.atRef.get(path)).to.equal(text);
      expect(source).to.deep.equal(expected);
      expect(working).to.deep.equal({ text, source: expected });
    });
  }

  it('a source under a directory that does not exist is missing, with nothing to follow', async () => {
    const path = 'nowhere/at/all/x';
    const snapshot = await readCanonicalSnapshot(createGit(repo), [path]);
    expect(snapshot.atRef.get(path)).to.equal(null);
    expect(snapshot.sources?.get(path)).to.equal(undefined);
    expect(() => readWorkingSource(repo, path)).to.throw('is missing');
  });

  it('a source that became bytes keeps its text versions, and its bytes version says base64', async () => {
    await writeFile(file('domains/files/plain'), Buffer.from([0x70, 0xe9, 0x0a]));
    git('commit', '-qam', 'plain becomes Latin-1');
    const snapshot = await readCanonicalSnapshot(createGit(repo), ['domains/files/plain']);
    expect(
      snapshot.history.get('domains/files/plain')?.map((v) => [v.content, v.encoding]),
    ).to.deep.equal([
      [Buffer.from([0x70, 0xe9, 0x0a]).toString('base64'), 'base64'],
      ['plain\n', undefined],
    ]);
  });

  it("a link's history is its target's: an older version of the target is a known version", async () => {
    await writeFile(file('dotfiles/vimrc'), 'set nocompatible\nset number\n');
    git('commit', '-qam', 'vimrc v2');
    const snapshot = await readCanonicalSnapshot(createGit(repo), ['domains/files/vimrc']);
    expect(snapshot.atRef.get('domains/files/vimrc')).to.equal('set nocompatible\nset number\n');
    expect(snapshot.history.get('domains/files/vimrc')?.map((v) => v.content)).to.deep.equal([
      'set nocompatible\nset number\n',
      'set nocompatible\n',
    ]);
  });
});

describe('sources: adopt --promote writes a linked source at its target, never over the link', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-promote-links-'));
    await mkdir(join(root, 'domains', 'files'), { recursive: true });
    await mkdir(join(root, 'dotfiles', 'config', 'nvim'), { recursive: true });
    await writeFile(join(root, 'dotfiles', 'vimrc'), 'set number\n');
    await symlink('../../dotfiles/vimrc', join(root, 'domains', 'files', 'vimrc'));
    await symlink('../../dotfiles/config', join(root, 'domains', 'files', 'config'));
    await symlink('../../../outside', join(root, 'domains', 'files', 'outside'));
    await writeFile(join(root, 'domains', 'files', 'plain'), 'x\n');
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const cases: { source: string; writes?: string; refused?: string }[] = [
    { source: 'domains/files/plain', writes: 'domains/files/plain' },
    { source: 'domains/files/vimrc', writes: 'dotfiles/vimrc' },
    { source: 'domains/files/config/nvim/init.lua', writes: 'dotfiles/config/nvim/init.lua' },
    { source: 'domains/files/outside', refused: 'outside the repository' },
  ];
  for (const { source, writes, refused } of cases) {
    it(`${source}: ${writes === undefined ? `PROMOTE_REFUSED (${refused})` : `writes ${writes}`}`, () => {
      if (writes !== undefined) {
        expect(promotionWritePath(root, source)).to.equal(writes);
        expect(() => checkNoLinkOnWay(root, writes)).to.not.throw();
        return;
      }
      try {
        promotionWritePath(root, source);
        expect.fail('not refused');
      } catch (error) {
        expect(isFleetError(error) && error.code).to.equal('PROMOTE_REFUSED');
        expect((error as Error).message)
          .to.contain(refused)
          .and.contain(source);
      }
    });
  }

  it('a write whose path has a link on its way is refused (SYMLINK_REFUSED), naming the link', () => {
    for (const [path, link] of [
      ['domains/files/vimrc', 'domains/files/vimrc'],
      ['domains/files/config/nvim/init.lua', 'domains/files/config'],
    ] as const) {
      try {
        checkNoLinkOnWay(root, path);
        expect.fail('not refused');
      } catch (error) {
        expect(isFleetError(error) && error.code).to.equal('SYMLINK_REFUSED');
        expect((error as Error).message).to.contain(`${link} is a symbolic link`);
      }
    }
  });
});
