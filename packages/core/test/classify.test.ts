import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PublishedLines,
  classify,
  splitLines,
  type PublishedVersion,
} from '../src/classify/classify.js';
import {
  parseCatFileBatch,
  readCanonicalHistory,
  readCanonicalSnapshot,
} from '../src/classify/history.js';
import { createGit, type Git } from '../src/git.js';

const commit = (id: string): PublishedVersion['source'] => ({ kind: 'commit', commit: id });

/** A policy through four releases; v4 rewrites most lines. */
const v1 = '# Policy v1\n- be careful\n- commit often\n- no secrets\n';
const v2 = '# Policy v2\n- be careful\n- commit often\n- no secrets\n- review diffs\n';
const v3 = '# Policy v3\n- be careful\n- commit small steps\n- no secrets\n- review diffs\n';
const v4 =
  '# Policy v4\n- think first\n- small reviewed steps\n- secrets by name only\n- ask before deleting\n';
const versions: PublishedVersion[] = [
  { source: commit('c4'), content: v4 },
  { source: commit('c3'), content: v3 },
  { source: commit('c2'), content: v2 },
  { source: commit('c1'), content: v1 },
];

describe('classify (history-aware)', () => {
  const published = new PublishedLines(versions);

  const cases: { name: string; live: string | null; expected: object }[] = [
    { name: 'equal bytes are current', live: v4, expected: { state: 'current' } },
    { name: 'no live file is missing', live: null, expected: { state: 'missing' } },
    {
      name: 'a host three releases behind across a rewrite is stale, naming the version it equals',
      live: v1,
      expected: { state: 'stale', equals: commit('c1'), lineEndingsOnly: false },
    },
    {
      name: 'one extra local line makes it diverged with localLines 1',
      live: `${v1}- my own rule\n`,
      expected: { state: 'diverged', localLines: 1, lines: [{ line: 5, text: '- my own rule' }] },
    },
    {
      name: 'a recombination of published lines is stale and equals no version',
      live: '# Policy v2\n- be careful\n- think first\n',
      expected: { state: 'stale', equals: null, lineEndingsOnly: false },
    },
    {
      name: 'a local deletion of lines is stale and equals no version',
      live: '# Policy v4\n- think first\n',
      expected: { state: 'stale', equals: null, lineEndingsOnly: false },
    },
    {
      name: 'CRLF endings of the desired view are stale, not current and not diverged',
      live: v4.replace(/\n/g, '\r\n'),
      expected: { state: 'stale', equals: commit('c4'), lineEndingsOnly: true },
    },
    {
      name: 'CRLF endings of an older version are stale and name that version',
      live: v2.replace(/\n/g, '\r\n'),
      expected: { state: 'stale', equals: commit('c2'), lineEndingsOnly: true },
    },
    {
      name: 'a missing final newline is stale, line endings only',
      live: v4.slice(0, -1),
      expected: { state: 'stale', equals: commit('c4'), lineEndingsOnly: true },
    },
    {
      name: 'a line with a trailing space is a local line',
      live: v4.replace('- think first', '- think first '),
      expected: { state: 'diverged', localLines: 1, lines: [{ line: 2, text: '- think first ' }] },
    },
    {
      name: 'a lone carriage return inside a line is content, not a line ending',
      live: v4.replace('- think first', '- think\rfirst'),
      expected: { state: 'diverged', localLines: 1, lines: [{ line: 2, text: '- think\rfirst' }] },
    },
    {
      name: 'an empty live file is stale (every one of its zero lines is published)',
      live: '',
      expected: { state: 'stale', equals: null, lineEndingsOnly: false },
    },
  ];
  for (const { name, live, expected } of cases) {
    it(name, () => {
      expect(classify(live, v4, published)).to.deep.equal(expected);
    });
  }

  it('counts every local line, each with its line number', () => {
    const live = `local one\n${v3}local two\nlocal one\n`;
    const result = classify(live, v4, published);
    expect(result).to.deep.equal({
      state: 'diverged',
      localLines: 3,
      lines: [
        { line: 1, text: 'local one' },
        { line: 7, text: 'local two' },
        { line: 8, text: 'local one' },
      ],
    });
  });

  it('treats a backup the node holds as published', () => {
    const backup = `${v4}- a line only the backup had\n`;
    const withBackup = new PublishedLines([
      ...versions,
      { source: { kind: 'backup', path: '~/.local/state/fleet/backups/x' }, content: backup },
    ]);
    expect(classify(backup, v4, withBackup)).to.deep.equal({
      state: 'stale',
      equals: { kind: 'backup', path: '~/.local/state/fleet/backups/x' },
      lineEndingsOnly: false,
    });
    expect(classify(backup, v4, published).state).to.equal('diverged');
  });

  it('splits lines without terminators and without a phantom last line', () => {
    expect(splitLines('')).to.deep.equal([]);
    expect(splitLines('a')).to.deep.equal(['a']);
    expect(splitLines('a\n')).to.deep.equal(['a']);
    expect(splitLines('a\r\nb\r\n')).to.deep.equal(['a', 'b']);
    expect(splitLines('a\n\n')).to.deep.equal(['a', '']);
  });
});

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

  beforeEach(async () => {
    repo = await mkdtemp(join(tmpdir(), 'fleet-history-'));
    git('init', '-q', '-b', 'main');
    await mkdir(join(repo, 'domains', 'd'), { recursive: true });
  });
  afterEach(() => rm(repo, { recursive: true, force: true }));

  it('reads every version on the main line, newest first, each content once', async () => {
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

  it('follows the first parent only: a side branch merged in is not a published version', async () => {
    await commitFile('domains/d/a.md', 'main one\n', 'v1');
    git('checkout', '-q', '-b', 'side');
    await commitFile('domains/d/a.md', 'side draft\n', 'draft');
    await commitFile('domains/d/a.md', 'side final\n', 'final');
    git('checkout', '-q', 'main');
    git('merge', '-q', '--no-ff', '-m', 'merge side', 'side');
    const versions = (await readCanonicalHistory(createGit(repo), ['domains/d/a.md'])).get(
      'domains/d/a.md',
    );
    expect(versions?.map((v) => v.content)).to.deep.equal(['side final\n', 'main one\n']);
  });

  it('reads any number of versions of several files in exactly two git processes', async () => {
    for (let i = 0; i < 60; i += 1) {
      await writeFile(join(repo, 'domains/d/b.md'), `b ${i}\n`);
      await commitFile('domains/d/a.md', `line ${i}\n`, `v${i}`);
    }
    const real = createGit(repo);
    const calls: string[] = [];
    const counting: Git = {
      run: (args, options) => (calls.push(args.join(' ')), real.run(args, options)),
      runBytes: (args, options) => (calls.push(args.join(' ')), real.runBytes(args, options)),
    };
    const history = await readCanonicalHistory(counting, ['domains/d/a.md', 'domains/d/b.md']);
    expect(history.get('domains/d/a.md')).to.have.length(60);
    expect(history.get('domains/d/b.md')?.[0]?.content).to.equal('b 59\n');
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
