/**
 * The history cache (`.git/fleet-cache/history-v1-*.json`, core `cache/history.ts`; contract §14,
 * "means"): the canonical files' snapshot kept keyed by the commit it was read at and the paths it
 * covers — answered without git while nothing was committed, read again after a new commit, a
 * corrupt file ignored and rewritten — and history indexes built only when first asked.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  historyCacheBody,
  historyCacheFileName,
  readCanonicalSnapshotCached,
  snapshotFromCacheBody,
  type HistoryCacheBody,
} from '../src/classify/history-cache.js';
import { HistoryIndex } from '../src/classify/history-index.js';
import { readCanonicalSnapshot, type CanonicalVersion } from '../src/classify/history.js';
import { createGit, type Git } from '../src/git.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const KEY = { commit: A, paths: ['domains/d/x.md'], directories: ['hosts'] };
const BODY: HistoryCacheBody = {
  commit: A,
  paths: ['domains/d/x.md'],
  directories: ['hosts'],
  atRef: { 'domains/d/x.md': 'two\n' },
  history: {
    'domains/d/x.md': [
      { commit: A, date: '2026-01-02T00:00:00Z', content: 'two\n' },
      { commit: B, date: '2026-01-01T00:00:00Z', content: 'one\n' },
    ],
    'hosts/alpha.yaml': [{ commit: B, date: '2026-01-01T00:00:00Z', content: 'node_id: a\n' }],
  },
  sources: { 'domains/d/x.md': { executable: true } },
};

describe('cache/history: which cache body answers which request', () => {
  const cases: { name: string; key: typeof KEY; body: unknown; hit: boolean }[] = [
    { name: 'the same commit and paths', key: KEY, body: BODY, hit: true },
    { name: 'another commit (a new commit)', key: { ...KEY, commit: B }, body: BODY, hit: false },
    {
      name: 'another set of paths',
      key: { ...KEY, paths: ['domains/d/x.md', 'domains/d/y.md'] },
      body: BODY,
      hit: false,
    },
    { name: 'other directories', key: { ...KEY, directories: [] }, body: BODY, hit: false },
    {
      name: 'a body naming a path it holds no history of',
      key: KEY,
      body: { ...BODY, history: {} },
      hit: false,
    },
    { name: 'an unknown field', key: KEY, body: { ...BODY, extra: 1 }, hit: false },
    {
      name: "a body of an older core, without the sources' git modes",
      key: KEY,
      body: { ...BODY, sources: undefined },
      hit: false,
    },
    {
      name: 'a commit that is no object id',
      key: { ...KEY, commit: 'HEAD' },
      body: { ...BODY, commit: 'HEAD' },
      hit: false,
    },
    {
      name: 'a version without its content',
      key: KEY,
      body: { ...BODY, history: { 'domains/d/x.md': [{ commit: A, date: 'd' }] } },
      hit: false,
    },
    { name: 'not an object', key: KEY, body: 'history', hit: false },
    { name: 'nothing (no file)', key: KEY, body: undefined, hit: false },
  ];
  for (const { name, key, body, hit } of cases) {
    it(`${hit ? 'answers' : 'misses'}: ${name}`, () => {
      const snapshot = snapshotFromCacheBody(key, body);
      if (!hit) {
        expect(snapshot).to.equal(undefined);
        return;
      }
      expect(snapshot?.commit).to.equal(A);
      expect(snapshot?.atRef.get('domains/d/x.md')).to.equal('two\n');
      expect(snapshot?.history.get('domains/d/x.md')?.map((v) => v.content)).to.deep.equal([
        'two\n',
        'one\n',
      ]);
      expect(snapshot?.history.get('hosts/alpha.yaml')).to.have.length(1);
    });
  }

  it('round-trips a snapshot through its body', () => {
    const snapshot = snapshotFromCacheBody(KEY, BODY);
    expect(snapshot).to.not.equal(undefined);
    expect(historyCacheBody(KEY, snapshot!)).to.deep.equal(BODY);
  });

  it('names one file per set of paths, whatever their order or commit', () => {
    const name = historyCacheFileName({ paths: ['b', 'a'], directories: ['hosts'] });
    expect(name).to.match(/^history-v1-[0-9a-f]{16}\.json$/);
    expect(historyCacheFileName({ paths: ['a', 'b'], directories: ['hosts'] })).to.equal(name);
    expect(historyCacheFileName({ paths: ['a'], directories: ['hosts'] })).to.not.equal(name);
    expect(historyCacheFileName({ paths: ['a', 'b'], directories: [] })).to.not.equal(name);
  });
});

describe('cache/history: a snapshot kept under .git/fleet-cache (real git)', () => {
  let repo: string;
  let cacheDir: string;
  let gitCalls: string[];
  const PATH = 'domains/d/x.md';
  const sh = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    });
  const commit = async (content: string) => {
    await writeFile(join(repo, PATH), content);
    sh('add', '--all');
    sh('commit', '-q', '-m', content.trim());
    return sh('rev-parse', 'HEAD').trim();
  };
  /** Real git, with the subcommands it was asked to run recorded. */
  const countingGit = (): Git => {
    const real = createGit(repo);
    return {
      run: (args, options) => {
        gitCalls.push(args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? '');
        return real.run(args, options);
      },
      runBytes: (args, options) => {
        gitCalls.push(args[0] ?? '');
        return real.runBytes(args, options);
      },
      catFile: () => {
        gitCalls.push('cat-file');
        return real.catFile();
      },
    };
  };
  const read = (head: string, dir: string | null = cacheDir) =>
    readCanonicalSnapshotCached(countingGit(), dir, {
      commit: head,
      paths: [PATH],
      directories: ['hosts'],
    });
  const cacheFiles = () =>
    existsSync(cacheDir) ? readdirSync(cacheDir).filter((f) => f.startsWith('history-')) : [];

  beforeEach(async () => {
    repo = await mkdtemp(join(tmpdir(), 'fleet-history-cache-'));
    sh('init', '-q', '-b', 'main');
    await mkdir(join(repo, 'domains', 'd'), { recursive: true });
    await mkdir(join(repo, 'hosts'));
    await writeFile(join(repo, 'hosts', 'alpha.yaml'), 'node_id: alpha\n');
    cacheDir = join(repo, '.git', 'fleet-cache');
    gitCalls = [];
  });
  afterEach(() => rm(repo, { recursive: true, force: true }));

  it('reads git once, then answers the same commit from the cache with the same snapshot', async () => {
    await commit('one\n');
    const head = await commit('two\n');
    const first = await read(head);
    expect(gitCalls).to.deep.equal(['log', 'cat-file']);
    expect(cacheFiles()).to.have.length(1);
    gitCalls = [];
    const second = await read(head);
    expect(gitCalls).to.deep.equal([]);
    expect(second).to.deep.equal(first);
    expect(second).to.deep.equal(
      await readCanonicalSnapshot(createGit(repo), [PATH], head, ['hosts']),
    );
    expect(second.history.get(PATH)?.map((v: CanonicalVersion) => v.content)).to.deep.equal([
      'two\n',
      'one\n',
    ]);
  });

  it('reads git again after a new commit, and sees the new version', async () => {
    const before = await commit('one\n');
    await read(before);
    const after = await commit('three\n');
    gitCalls = [];
    const snapshot = await read(after);
    expect(gitCalls).to.deep.equal(['log', 'cat-file']);
    expect(snapshot.commit).to.equal(after);
    expect(snapshot.atRef.get(PATH)).to.equal('three\n');
    expect(snapshot.history.get(PATH)?.map((v) => v.content)).to.deep.equal(['three\n', 'one\n']);
    // One file per set of paths: the new commit's snapshot replaced the old one.
    expect(cacheFiles()).to.have.length(1);
    gitCalls = [];
    await read(after);
    expect(gitCalls).to.deep.equal([]);
  });

  it('ignores a corrupt cache file, reads git and rewrites it', async () => {
    const head = await commit('one\n');
    await read(head);
    const [file] = cacheFiles();
    await writeFile(join(cacheDir, file as string), '{"format":"x","sha256":"0"}\n{"commit":');
    gitCalls = [];
    const snapshot = await read(head);
    expect(gitCalls).to.deep.equal(['log', 'cat-file']);
    expect(snapshot.atRef.get(PATH)).to.equal('one\n');
    gitCalls = [];
    await read(head);
    expect(gitCalls).to.deep.equal([]);
  });

  it('reads git every time without a cache directory, and when it was deleted', async () => {
    const head = await commit('one\n');
    await read(head, null);
    await read(head, null);
    expect(gitCalls).to.deep.equal(['log', 'cat-file', 'log', 'cat-file']);
    expect(cacheFiles()).to.deep.equal([]);
    await read(head);
    await rm(cacheDir, { recursive: true });
    gitCalls = [];
    expect((await read(head)).atRef.get(PATH)).to.equal('one\n');
    expect(gitCalls).to.deep.equal(['log', 'cat-file']);
  });
});

describe('HistoryIndex built on first use', () => {
  const versions: CanonicalVersion[] = [
    { commit: 'c2', date: '2026-01-02T00:00:00Z', content: 'listen: 8081\n' },
    { commit: 'c1', date: '2026-01-01T00:00:00Z', content: 'listen: 8080\n' },
  ];

  it('asks for the versions only when a known set is first asked something, and once', () => {
    let asked = 0;
    const index = new HistoryIndex(() => {
      asked += 1;
      return versions;
    });
    const known = index.forHost({ node_id: 'alpha' });
    expect(asked).to.equal(0);
    expect(known.versionEqualTo(['listen: 8080'])?.source).to.deep.include({ commit: 'c1' });
    expect(known.has('listen: 8081')).to.equal(true);
    expect(index.size).to.equal(2);
    expect(asked).to.equal(1);
  });

  it('answers as an index built at once does', () => {
    const eager = new HistoryIndex(versions).forHost({});
    const lazy = new HistoryIndex(() => versions).forHost({});
    for (const lines of [['listen: 8080'], ['listen: 8081'], ['listen: 9']]) {
      expect(lazy.versionEqualTo(lines)).to.deep.equal(eager.versionEqualTo(lines));
    }
    expect([...lazy.versions()]).to.deep.equal([...eager.versions()]);
  });
});
