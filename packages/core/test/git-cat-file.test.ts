/**
 * `Git.catFile()`: one `git cat-file --batch` process answering reads in turn (contract §14: a
 * verb's repo load asks HEAD, then paths at its commit, then the host files, in one process).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createGit, takeCatFileEntries } from '../src/git.js';

describe('takeCatFileEntries', () => {
  const answer = Buffer.from('aa blob 3\nabc\nHEAD:nope missing\nbb blob 0\n\n', 'utf8');

  it('takes whole answers only, at every point the output may be cut', () => {
    for (let cut = 0; cut <= answer.length; cut += 1) {
      const { entries, offset } = takeCatFileEntries(answer.subarray(0, cut), 3);
      const complete = cut >= 43 ? 3 : cut >= 32 ? 2 : cut >= 14 ? 1 : 0;
      expect(entries, `cut at ${cut}`).to.have.length(complete);
      expect(offset, `cut at ${cut}`).to.equal([0, 14, 32, 43][complete]);
    }
    // How long the output must grow before the next answer can be whole: past its content once
    // the header is in, else one more byte.
    expect(takeCatFileEntries(answer.subarray(0, 5), 3).needed).to.equal(6);
    expect(takeCatFileEntries(answer.subarray(0, 11), 3).needed).to.equal(14);
    expect(takeCatFileEntries(answer.subarray(0, 35), 3).needed).to.equal(36);
    expect(takeCatFileEntries(answer.subarray(0, 42), 3).needed).to.equal(43);
    expect(takeCatFileEntries(answer, 3).needed).to.equal(0);
    const { entries } = takeCatFileEntries(answer, 3);
    expect(entries.map((e) => e && { ...e, content: e.content.toString() })).to.deep.equal([
      { oid: 'aa', type: 'blob', content: 'abc' },
      null,
      { oid: 'bb', type: 'blob', content: '' },
    ]);
  });

  it('stops at the count asked, and refuses a header it cannot read', () => {
    expect(takeCatFileEntries(answer, 1)).to.deep.include({ offset: 14 });
    expect(() => takeCatFileEntries(Buffer.from('aa blob x\n'), 1)).to.throw(/header/);
  });
});

describe('Git.catFile (real git)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-cat-file-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    git('init', '-q');
    await writeFile(join(root, 'a.txt'), 'first\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'one');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('answers each read in turn in one process, a later one built on an earlier answer', async () => {
    const batch = createGit(root).catFile();
    try {
      const [head] = await batch.read(['HEAD^{commit}']);
      expect(head?.type).to.equal('commit');
      const [file, absent] = await batch.read([`${head?.oid}:a.txt`, `${head?.oid}:none`]);
      expect(file?.content.toString()).to.equal('first\n');
      expect(absent).to.equal(null);
      expect(await batch.read([])).to.deep.equal([]);
      // Concurrent reads are answered in the order they were written.
      const [x, y] = await Promise.all([batch.read([`${head?.oid}:a.txt`]), batch.read(['HEAD'])]);
      expect(x[0]?.type).to.equal('blob');
      expect(y[0]?.oid).to.equal(head?.oid);
    } finally {
      batch.close();
    }
  });

  it('reads a blob of many megabytes, delivered in many chunks, whole', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024, 'fleet\n');
    await writeFile(join(root, 'big.txt'), big);
    execFileSync('git', ['-C', root, 'add', 'big.txt']);
    const oid = execFileSync('git', ['-C', root, 'hash-object', 'big.txt'], { encoding: 'utf8' });
    const batch = createGit(root).catFile();
    try {
      const [entry, small] = await batch.read([oid.trim(), 'HEAD:a.txt']);
      expect(entry?.content.equals(big)).to.equal(true);
      expect(small?.content.toString()).to.equal('first\n');
    } finally {
      batch.close();
    }
  });

  it('reads eight hundred small blobs in one read, over many chunks, each whole and in order', async () => {
    const names = Array.from({ length: 800 }, (_, i) => `f${String(i).padStart(4, '0')}.txt`);
    await mkdir(join(root, 'many'));
    for (const name of names)
      await writeFile(join(root, 'many', name), `${name}: ${'x'.repeat(200)}\n`);
    execFileSync('git', ['-C', root, 'add', 'many']);
    const oids = execFileSync('git', ['-C', root, 'ls-files', '-s', 'many'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/)[1] as string);
    const batch = createGit(root).catFile();
    try {
      const entries = await batch.read([...oids, 'HEAD:a.txt']);
      expect(entries.length).to.equal(names.length + 1);
      entries.slice(0, -1).forEach((entry, i) => {
        expect(entry?.content.toString()).to.equal(`${names[i]}: ${'x'.repeat(200)}\n`);
      });
      expect(entries[names.length]?.content.toString()).to.equal('first\n');
    } finally {
      batch.close();
    }
  });

  it('rejects with REPO_INVALID when git cannot run there, and refuses a name with a newline', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'fleet-cat-file-none-'));
    try {
      const batch = createGit(join(outside, 'missing')).catFile();
      await batch.read(['HEAD']).then(
        () => expect.fail('expected REPO_INVALID'),
        (error: { code: string; message: string }) => {
          expect(error.code).to.equal('REPO_INVALID');
          expect(error.message).to.match(/^git cat-file failed in /);
        },
      );
      batch.close();
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
    const batch = createGit(root).catFile();
    await batch.read(['HEAD\nHEAD']).then(
      () => expect.fail('expected a refusal'),
      (error: Error) => expect(error.message).to.match(/newline/),
    );
    batch.close();
  });
});
