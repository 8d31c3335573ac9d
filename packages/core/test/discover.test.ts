import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FleetError } from '../src/errors.js';
import { discoverRepo, enclosingRepo, otherRepoWarning } from '../src/repo/discover.js';

async function rejected(promise: Promise<unknown>): Promise<FleetError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError rejection');
}

describe('repo/discover', () => {
  // base/
  //   flag-repo/fleet.yaml
  //   env-repo/fleet.yaml
  //   outer/fleet.yaml
  //   outer/inner/fleet.yaml
  //   outer/inner/a/b/c/          (cwd for walking up)
  //   outer/plain/x/              (no fleet.yaml of its own)
  //   empty/                      (no fleet.yaml)
  //   dir-named-fleet/fleet.yaml/ (a directory, not a file)
  let base: string;
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'fleet-discover-')));
    for (const dir of ['flag-repo', 'env-repo', 'outer/inner/a/b/c', 'outer/plain/x', 'empty']) {
      await mkdir(join(base, dir), { recursive: true });
    }
    for (const dir of ['flag-repo', 'env-repo', 'outer', 'outer/inner']) {
      await writeFile(join(base, dir, 'fleet.yaml'), 'apiVersion: fleet/v1\n');
    }
    await mkdir(join(base, 'dir-named-fleet', 'fleet.yaml'), { recursive: true });
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const at = (dir: string): string => join(base, dir);

  describe('precedence: --repo, then FLEET_REPO, then walking up', () => {
    const cases: [
      title: string,
      flag: string | undefined,
      env: string | undefined,
      found: string,
    ][] = [
      ['--repo beats FLEET_REPO and the working directory', 'flag-repo', 'env-repo', 'flag-repo'],
      ['FLEET_REPO beats the working directory', undefined, 'env-repo', 'env-repo'],
      ['an empty --repo is ignored', '', 'env-repo', 'env-repo'],
      ['an empty FLEET_REPO is ignored', undefined, '', 'outer/inner'],
      [
        'neither set: the nearest fleet.yaml above the working directory',
        undefined,
        undefined,
        'outer/inner',
      ],
    ];
    for (const [title, flag, env, found] of cases) {
      it(title, async () => {
        const dir = await discoverRepo({
          flag: flag === undefined || flag === '' ? flag : at(flag),
          env: { FLEET_REPO: env === undefined || env === '' ? env : at(env) },
          cwd: at('outer/inner/a/b/c'),
        });
        expect(dir).to.equal(at(found));
      });
    }

    it('resolves a relative --repo and FLEET_REPO against the working directory', async () => {
      expect(await discoverRepo({ flag: '../flag-repo', cwd: at('empty') })).to.equal(
        at('flag-repo'),
      );
      expect(
        await discoverRepo({ env: { FLEET_REPO: '../../env-repo' }, cwd: at('outer/plain') }),
      ).to.equal(at('env-repo'));
    });
  });

  describe('an explicit location without fleet.yaml is REPO_NOT_FOUND naming its source', () => {
    const cases: [
      title: string,
      flag: string | undefined,
      env: string | undefined,
      source: string,
    ][] = [
      ['--repo pointing at a directory without one', 'empty', 'env-repo', '--repo'],
      ['--repo pointing at a missing directory', 'nowhere', undefined, '--repo'],
      ['FLEET_REPO pointing at a directory without one', undefined, 'empty', 'FLEET_REPO'],
      ['fleet.yaml that is a directory', 'dir-named-fleet', undefined, '--repo'],
    ];
    for (const [title, flag, env, source] of cases) {
      it(title, async () => {
        const error = await rejected(
          discoverRepo({
            flag: flag === undefined ? undefined : at(flag),
            env: { FLEET_REPO: env === undefined ? undefined : at(env) },
            // a repo above the cwd must not rescue an explicit location that is wrong
            cwd: at('outer/inner'),
          }),
        );
        expect(error.code).to.equal('REPO_NOT_FOUND');
        expect(error.exitCode).to.equal(2);
        expect(error.message.startsWith(`${source} `)).to.equal(true, error.message);
        expect(error.message).to.contain(at(flag ?? env ?? ''));
        expect(error.suggestions.join('\n')).to.contain('fleet init');
      });
    }
  });

  describe('walking up', () => {
    it('finds fleet.yaml in the working directory itself', async () => {
      expect(await discoverRepo({ cwd: at('outer/inner') })).to.equal(at('outer/inner'));
    });

    it('finds the nearest one from a nested directory', async () => {
      expect(await discoverRepo({ cwd: at('outer/inner/a/b/c') })).to.equal(at('outer/inner'));
      expect(await discoverRepo({ cwd: at('outer/plain/x') })).to.equal(at('outer'));
    });

    it('is REPO_NOT_FOUND when no directory above holds one', async function () {
      for (let dir = base; ; dir = dirname(dir)) {
        if (existsSync(join(dir, 'fleet.yaml'))) this.skip(); // the machine has one above tmpdir
        if (dirname(dir) === dir) break;
      }
      const error = await rejected(discoverRepo({ cwd: at('empty'), env: {} }));
      expect(error.code).to.equal('REPO_NOT_FOUND');
      expect(error.message).to.contain(at('empty')).and.contain('--repo').and.contain('FLEET_REPO');
      expect(error.suggestions).to.have.length(2);
    });
  });

  it('enclosingRepo: the nearest fleet.yaml at or above the directory, or null', async () => {
    expect(await enclosingRepo(join(base, 'outer/inner/a/b/c'))).to.equal(
      join(base, 'outer/inner'),
    );
    expect(await enclosingRepo(join(base, 'outer/plain/x'))).to.equal(join(base, 'outer'));
    expect(await enclosingRepo(join(base, 'empty'))).to.equal(null);
  });

  describe('otherRepoWarning (a leftover $FLEET_REPO is named, never silent)', () => {
    const cases: [
      title: string,
      input: Parameters<typeof otherRepoWarning>[0],
      expected: RegExp | null,
    ][] = [
      ['outside any repository', { used: '/lab/repo', enclosing: null }, null],
      ['inside the one used', { used: '/work/fleet', enclosing: '/work/fleet' }, null],
      [
        'inside another, $FLEET_REPO wins',
        { used: '/lab/repo', enclosing: '/work/fleet' },
        /^warning: using the fleet repository \/lab\/repo \(from \$FLEET_REPO\), not \/work\/fleet .*unset FLEET_REPO/,
      ],
      [
        'inside another, --repo wins',
        { used: '/lab/repo', enclosing: '/work/fleet', flag: '/lab/repo' },
        /\(from --repo\), not \/work\/fleet .*drop --repo/,
      ],
    ];
    for (const [title, input, expected] of cases) {
      it(title, () => {
        const warning = otherRepoWarning(input);
        if (expected === null) expect(warning).to.equal(null);
        else expect(warning).to.match(expected);
      });
    }
  });
});
