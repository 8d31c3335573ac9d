/**
 * A domain's repository manifest as its plugin parsed it, kept under `.git/fleet-cache`
 * (`cache/repo-files.ts`; contract §14, "means"): the same bytes parsed by the same plugin are not
 * parsed again; new bytes, another plugin version, a linked plugin, a parse that failed and a
 * corrupt cache file all go to the plugin.
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedRepoFiles } from '../src/cache/repo-files.js';
import { FleetError } from '../src/errors.js';
import type { ManagedFile } from '../src/interfaces/domain.js';

const PLUGIN = { name: '@fleet/plugin-files', version: '0.1.0', type: 'core' };

describe('cache/repo-files: a repository manifest parsed once per plugin and blob', () => {
  let dir: string;
  let parses: string[];
  /** A parser that records what it was asked: one declared file per line of the manifest. */
  const parser = (manifest: string) => {
    parses.push(manifest);
    if (manifest.includes('bad')) throw new FleetError('FILES_MANIFEST_INVALID', 'bad entry');
    const files = manifest
      .split('\n')
      .filter(Boolean)
      .map((line, i) => ({ id: `f${i}`, path: `~/.config/${line}`, source: line }));
    return { files: files as unknown as ManagedFile[], hostVariables: ['node_id'] };
  };
  const parse = (manifest: string, plugin = PLUGIN, cacheDir: string | null = dir) =>
    cachedRepoFiles(cacheDir, plugin, 'files', parser)(manifest, 'domains/files/files.yaml');

  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'fleet-repo-files-cache-')), 'fleet-cache');
    parses = [];
  });
  afterEach(() => rm(join(dir, '..'), { recursive: true, force: true }));

  it('answers the same manifest from the cache with what the plugin returned', () => {
    const first = parse('a.conf\nb.conf\n');
    const second = parse('a.conf\nb.conf\n');
    expect(parses).to.have.length(1);
    expect(second).to.deep.equal(first);
  });

  const misses: { name: string; then: () => unknown }[] = [
    { name: 'another manifest', then: () => parse('a.conf\nc.conf\n') },
    {
      name: 'another plugin version',
      then: () => parse('a.conf\n', { ...PLUGIN, version: '0.2.0' }),
    },
    { name: 'a linked plugin', then: () => parse('a.conf\n', { ...PLUGIN, type: 'link' }) },
    { name: 'no cache directory', then: () => parse('a.conf\n', PLUGIN, null) },
  ];
  for (const { name, then } of misses) {
    it(`asks the plugin again for ${name}`, () => {
      parse('a.conf\n');
      then();
      expect(parses).to.have.length(2);
    });
  }

  it('never keeps a parse that failed: it fails again', () => {
    for (let i = 0; i < 2; i += 1) expect(() => parse('bad\n')).to.throw('bad entry');
    expect(parses).to.have.length(2);
  });

  it('ignores a corrupt cache file and parses again', async () => {
    parse('a.conf\n');
    await writeFile(join(dir, 'repo-files-v1.json'), '{"format":"fleet.repo-files-cache/v1"');
    expect(parse('a.conf\n').files).to.have.length(1);
    expect(parses).to.have.length(2);
    parse('a.conf\n');
    expect(parses).to.have.length(2);
  });
});
