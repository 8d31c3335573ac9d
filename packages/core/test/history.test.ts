/**
 * Reading the published versions from real git (contract §8.2, §14): every commit reachable from
 * HEAD, renames followed, in two git processes whatever the history.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  parseCatFileBatch,
  readCanonicalHistory,
  readCanonicalSnapshot,
} from '../src/classify/history.js';
import { createGit, type Git } from '../src/git.js';

describe('readCanonicalHistory (real git)', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    });
  const commitFile = async (path: string, content: string | null, message: string) => {
    if (content === null) await unlink(join(repo, path));
    else await writeFile(join(repo, path), content);
    git('add', '--all');
    git('commit', '-q', '-m', message);
    return git('rev-parse', 'HEAD').trim();
  };
  const contents = async (path: string, ref = 'HEAD') =>
    (await readCanonicalHistory(createGit(repo), [path], ref)).get(path)?.map((v) => v.content);

  beforeEach(async () => {
    repo = await mkdtemp(join(tmpdir(), 'fleet-history-'));
    git('init', '-q', '-b', 'main');
    await mkdir(join(repo, 'domains', 'd'), { recursive: true });
  });
  afterEach(() => rm(repo, { recursive: true, force: true }));

  it('reads every version, newest first, each content once', async () => {
    const c1 = await commitFile('domains/d/a.md', 'one\n', 'v1');
    const c2 = await commitFile('domains/d/a.md', 'two\n', 'v2');
    await commitFile('domains/d/other.md', 'unrelated\n', 'other file');
    await commitFile('domains/d/a.md', null, 'delete');
    const c5 = await commitFile('domains/d/a.md', 'one\n', 'restore v1');
    const history = await readCanonicalHistory(createGit(repo), [
      'domains/d/a.md',
      'domains/d/none.md',
    ]);
    const versions = history.get('domains/d/a.md') ?? [];
    expect(versions.map((v) => [v.commit, v.content])).to.deep.equal([
      [c5, 'one\n'],
      [c2, 'two\n'],
    ]);
    expect(c1).to.not.equal(c5);
    expect(history.get('domains/d/none.md')).to.deep.equal([]);
  });

  it('snapshots the files at the ref, with the commit the ref resolved to', async () => {
    await commitFile('domains/d/a.md', 'one\n', 'v1');
    await commitFile('domains/d/gone.md', 'soon gone\n', 'add');
    const head = await commitFile('domains/d/gone.md', null, 'remove');
    const snapshot = await readCanonicalSnapshot(createGit(repo), [
      'domains/d/a.md',
      'domains/d/gone.md',
    ]);
    expect(snapshot.commit).to.equal(head);
    expect(snapshot.atRef.get('domains/d/a.md')).to.equal('one\n');
    expect(snapshot.atRef.get('domains/d/gone.md')).to.equal(null);
    // Removed now, but it was published once: its version stays in the history.
    expect(snapshot.history.get('domains/d/gone.md')?.map((v) => v.content)).to.deep.equal([
      'soon gone\n',
    ]);
  });

  it('git log --follow: a canonical renamed with git mv keeps the versions of its old name', async () => {
    await commitFile('domains/d/policy.md', 'old name v1\n', 'v1 under its old name');
    await commitFile('domains/d/policy.md', 'old name v2\n', 'v2 under its old name');
    git('mv', 'domains/d/policy.md', 'domains/d/a.md');
    git('commit', '-q', '-m', 'rename');
    await commitFile('domains/d/a.md', 'new name v3\n', 'v3');
    expect(await contents('domains/d/a.md')).to.deep.equal([
      'new name v3\n',
      'old name v2\n',
      'old name v1\n',
    ]);
  });

  it('follows a chain of renames, and not a newer file that reuses an old name', async () => {
    await commitFile('domains/d/first.md', 'first\n', 'v1');
    git('mv', 'domains/d/first.md', 'domains/d/second.md');
    git('commit', '-q', '-m', 'rename 1');
    await commitFile('domains/d/second.md', 'second\n', 'v2');
    git('mv', 'domains/d/second.md', 'domains/d/a.md');
    git('commit', '-q', '-m', 'rename 2');
    // A new, unrelated file at an old name, after the rename away from it.
    await commitFile('domains/d/first.md', 'unrelated newcomer\n', 'newcomer');
    expect(await contents('domains/d/a.md')).to.deep.equal(['second\n', 'first\n']);
  });

  it('a topic branch merged with --no-ff counts like the same branch fast-forwarded', async () => {
    await commitFile('domains/d/a.md', 'main one\n', 'v1');
    git('checkout', '-q', '-b', 'side');
    await commitFile('domains/d/a.md', 'side draft\n', 'draft');
    await commitFile('domains/d/a.md', 'side final\n', 'final');
    git('branch', 'ff', 'side');
    git('checkout', '-q', 'main');
    git('branch', 'noff', 'main');
    git('checkout', '-q', 'noff');
    git('merge', '-q', '--no-ff', '-m', 'merge side', 'side');
    git('checkout', '-q', 'main');
    git('merge', '-q', '--ff-only', 'ff');
    const expected = ['side final\n', 'side draft\n', 'main one\n'];
    expect(await contents('domains/d/a.md', 'main')).to.deep.equal(expected);
    expect(await contents('domains/d/a.md', 'noff')).to.deep.equal(expected);
  });

  it("a merge's own resolution is a version; a branch never merged is not", async () => {
    await commitFile('domains/d/a.md', 'base\n', 'v1');
    git('checkout', '-q', '-b', 'side');
    await commitFile('domains/d/a.md', 'side\n', 'side');
    git('checkout', '-q', '-b', 'unmerged', 'main');
    await commitFile('domains/d/a.md', 'never merged\n', 'elsewhere');
    git('checkout', '-q', 'main');
    await commitFile('domains/d/a.md', 'main\n', 'main');
    git('merge', '-q', '--no-ff', '-m', 'merge', 'side', '-X', 'ours');
    await writeFile(join(repo, 'domains/d/a.md'), 'resolved\n');
    git('commit', '-q', '-a', '--amend', '--no-edit');
    const versions = await contents('domains/d/a.md');
    expect(versions).to.include.members(['resolved\n', 'side\n', 'main\n', 'base\n']);
    expect(versions).to.not.include('never merged\n');
  });

  it('reads any number of versions of several files in exactly two git processes', async () => {
    for (let i = 0; i < 60; i += 1) {
      await writeFile(join(repo, 'domains/d/b.md'), `b ${i}\n`);
      await commitFile('domains/d/a.md', `line ${i}\n`, `v${i}`);
    }
    git('mv', 'domains/d/b.md', 'domains/d/c.md');
    git('commit', '-q', '-m', 'rename');
    const real = createGit(repo);
    const calls: string[] = [];
    const counting: Git = {
      run: (args, options) => (calls.push(args.join(' ')), real.run(args, options)),
      runBytes: (args, options) => (calls.push(args.join(' ')), real.runBytes(args, options)),
      catFile: () => (calls.push('cat-file --batch (session)'), real.catFile()),
    };
    const history = await readCanonicalHistory(counting, ['domains/d/a.md', 'domains/d/c.md']);
    expect(history.get('domains/d/a.md')).to.have.length(60);
    expect(history.get('domains/d/c.md')).to.have.length(60);
    expect(history.get('domains/d/c.md')?.[0]?.content).to.equal('b 59\n');
    expect(calls).to.have.length(2);
  });

  it('parses cat-file batch output, including missing objects and binary-safe sizes', () => {
    const body = Buffer.from('héllo\n');
    const output = Buffer.concat([
      Buffer.from(`aaaa blob ${body.length}\n`),
      body,
      Buffer.from('\nbbbb:x missing\n'),
    ]);
    const [first, second] = parseCatFileBatch(output, 2);
    expect(first?.toString('utf8')).to.equal('héllo\n');
    expect(second).to.equal(null);
  });
});
