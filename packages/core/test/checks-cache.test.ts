/**
 * The installers' check answers kept under `.git/fleet-cache` across runs (`cache/checks.ts`;
 * contract §14, "means"): a view the same plugin checked in an earlier run is answered from the
 * cache, with the problems it had; other content, another plugin version or tarball, another
 * declared file or domain, a linked plugin, a check that threw and a corrupt cache file all go
 * to the plugin's check.
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkAnswerCache, type InstallerCheck } from '../src/cache/checks.js';
import type { Problem } from '../src/errors.js';
import type { ManagedFile } from '../src/interfaces/domain.js';
import type { PluginRef } from '../src/registry/assemble.js';

const PLUGIN: PluginRef = { name: '@fleet/plugin-router', version: '0.1.0', type: 'core' };
const FILE = { id: 'config', path: '~/.config/router/router.yaml', kind: 'whole' } as ManagedFile;

describe('cache/checks: an installer check answered once per plugin, file and content', () => {
  let dir: string;
  let asked: string[];
  /** A check that records what it was asked: a line `bad` is a problem on its line. */
  const check: InstallerCheck = (_file, content) => {
    asked.push(content);
    if (content.includes('throw')) throw new Error('the check failed');
    return content
      .split('\n')
      .flatMap((line, i): Problem[] =>
        line === 'bad' ? [{ file: 'router.yaml', line: i + 1, message: 'not YAML' }] : [],
      );
  };
  /** One run of a verb: a fresh cache over `dir`, the checks, then the save at its end. */
  const run = (
    contents: readonly string[],
    plugin = PLUGIN,
    options: { file?: ManagedFile; domain?: string; cacheDir?: string | null } = {},
  ): (readonly Problem[])[] => {
    const answers = checkAnswerCache(options.cacheDir === undefined ? dir : options.cacheDir);
    const wrapped = answers.wrap(plugin, options.domain ?? 'router', check);
    const results = contents.map((content) => wrapped(options.file ?? FILE, content));
    answers.save();
    return results;
  };

  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'fleet-checks-cache-')), 'fleet-cache');
    asked = [];
  });
  afterEach(() => rm(join(dir, '..'), { recursive: true, force: true }));

  it('answers a view checked in an earlier run from the cache, with its problems', () => {
    const first = run(['a: 1\n', 'a: 1\nbad\n']);
    const second = run(['a: 1\n', 'a: 1\nbad\n']);
    expect(asked).to.deep.equal(['a: 1\n', 'a: 1\nbad\n']);
    expect(second).to.deep.equal(first);
    expect(second[1]).to.deep.equal([{ file: 'router.yaml', line: 2, message: 'not YAML' }]);
  });

  const misses: { name: string; then: () => unknown }[] = [
    { name: 'other content', then: () => run(['a: 2\n']) },
    {
      name: 'another plugin version',
      then: () => run(['a: 1\n'], { ...PLUGIN, version: '0.2.0' }),
    },
    {
      name: 'another tarball of the same version',
      then: () => run(['a: 1\n'], { ...PLUGIN, sha256: 'f'.repeat(64) }),
    },
    { name: 'another plugin', then: () => run(['a: 1\n'], { ...PLUGIN, name: '@acme/router' }) },
    {
      name: 'another declared file',
      then: () => run(['a: 1\n'], PLUGIN, { file: { ...FILE, path: '~/.router.yaml' } }),
    },
    { name: 'another domain', then: () => run(['a: 1\n'], PLUGIN, { domain: 'router2' }) },
    { name: 'no cache directory', then: () => run(['a: 1\n'], PLUGIN, { cacheDir: null }) },
  ];
  for (const { name, then } of misses) {
    it(`checks again for ${name}`, () => {
      run(['a: 1\n']);
      then();
      expect(asked).to.have.length(2);
    });
  }

  it('never keeps a linked plugin’s answers (its code changes without a new version)', () => {
    const linked = { ...PLUGIN, type: 'link' };
    run(['a: 1\n'], linked);
    run(['a: 1\n'], linked);
    expect(asked).to.have.length(2);
  });

  it('keeps nothing for a run that never saved', () => {
    const answers = checkAnswerCache(dir);
    answers.wrap(PLUGIN, 'router', check)(FILE, 'a: 1\n');
    run(['a: 1\n']);
    expect(asked).to.have.length(2);
  });

  it('never keeps a check that threw: it throws again', () => {
    for (let i = 0; i < 2; i += 1) expect(() => run(['throw\n'])).to.throw('the check failed');
    expect(asked).to.have.length(2);
  });

  it('never keeps an answer its schema would not read back, and keeps the others', () => {
    const odd: InstallerCheck = (_file, content) => {
      asked.push(content);
      return content === 'odd' ? [{ message: 'x', column: 3 } as Problem] : [];
    };
    for (let i = 0; i < 2; i += 1) {
      const answers = checkAnswerCache(dir);
      const wrapped = answers.wrap(PLUGIN, 'router', odd);
      expect(wrapped(FILE, 'odd')).to.deep.equal([{ message: 'x', column: 3 }]);
      wrapped(FILE, 'fine');
      answers.save();
    }
    expect(asked).to.deep.equal(['odd', 'fine', 'odd']);
  });

  it('ignores a corrupt cache file, checks again and rewrites it', async () => {
    run(['a: 1\n']);
    await writeFile(join(dir, 'checks-v1.json'), '{"format":"fleet.checks-cache/v1"');
    run(['a: 1\n']);
    expect(asked).to.have.length(2);
    run(['a: 1\n']);
    expect(asked).to.have.length(2);
  });

  it('keeps the earlier runs’ answers beside this run’s', () => {
    run(['a: 1\n']);
    run(['a: 2\n']);
    run(['a: 1\n', 'a: 2\n']);
    expect(asked).to.deep.equal(['a: 1\n', 'a: 2\n']);
  });
});
