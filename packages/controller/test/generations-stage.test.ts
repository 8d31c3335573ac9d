/**
 * Staging runtime generations on real temp dirs (contract §12, catalogue 49): integrity before and
 * after, immutability, hostile tarballs refused with nothing staged and nothing flipped.
 */
import { execFile } from 'node:child_process';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { isFleetError, readCurrentPointer, runtimeLayout, type RuntimeLayout } from '@fleet/core';
import { removeTree, stageGeneration } from '../src/generations/generation.js';
import { verifyGeneration } from '../src/generations/verify.js';
import { currentPointer } from '../src/generations/pointer.js';
import { diskTree, sha256Hex } from '../src/generations/tree.js';
import { makeTgz, paxPath, runtimePackage, type FixtureEntry } from './support/tar.js';

const run = promisify(execFile);
const COMMIT = '9c1e0aa5'.repeat(5);
const OTHER = 'deadbeef'.repeat(5);
const buildRecord = (commit: string, dirty = false) =>
  `${JSON.stringify({ schema: 'fleet.build/v1', commit, dirty })}\n`;

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code?: string; message: string; problems?: { message: string }[] }> {
  try {
    await promise;
  } catch (error) {
    expect(isFleetError(error), String(error)).to.equal(true);
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('runtime generations: staging', () => {
  let home: string;
  let layout: RuntimeLayout;
  let artifacts: string;

  /** Writes a tarball of `entries` as an artifact; returns its path and sha256. */
  async function artifact(
    entries: readonly FixtureEntry[],
    name = 'fleet.tgz',
  ): Promise<{ path: string; sha256: string }> {
    const data = makeTgz(entries);
    const path = join(artifacts, name);
    await writeFile(path, data);
    return { path, sha256: sha256Hex(data) };
  }
  const stage = (a: { path: string; sha256: string }, sha256 = a.sha256) =>
    stageGeneration({ home, platform: 'linux', artifact: a.path, sha256 });
  const generations = async () =>
    (await readdir(layout.generations).catch(() => [] as string[])).sort();

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-stage-'));
    artifacts = await mkdtemp(join(tmpdir(), 'fleet-artifacts-'));
    layout = runtimeLayout(home, 'linux');
  });
  afterEach(async () => {
    await removeTree(home);
    await rm(artifacts, { recursive: true, force: true });
  });

  it('stages a tarball made by npm pack: build id = sha256, files 0444, dirs 0555, tree hash recorded', async () => {
    const pkg = join(artifacts, 'pkg');
    await mkdir(join(pkg, 'bin'), { recursive: true });
    await writeFile(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'fleet-runtime-fixture', version: '0.0.1', type: 'module' }),
    );
    await writeFile(join(pkg, 'bin/run.js'), 'console.log("hello");\n');
    await writeFile(join(pkg, 'fleet-build.json'), buildRecord(COMMIT));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', artifacts], {
      cwd: pkg,
    });
    const path = join(artifacts, (JSON.parse(stdout) as { filename: string }[])[0]?.filename ?? '');
    const sha256 = sha256Hex(await readFile(path));

    const staged = await stageGeneration({
      home,
      platform: 'linux',
      artifact: path,
      sha256,
      commit: COMMIT,
      now: () => new Date('2026-01-01T00:00:00Z'),
    });

    expect(staged.directory).to.equal(join(home, '.local/share/fleet/runtime/generations', sha256));
    expect(staged.reused).to.equal(false);
    expect(staged.manifest).to.include({
      schema: 'fleet.generation/v1',
      buildId: sha256,
      commit: COMMIT,
      files: 3,
      stagedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(staged.manifest.package).to.deep.equal({
      name: 'fleet-runtime-fixture',
      version: '0.0.1',
    });
    expect(await readFile(join(staged.directory, 'package/bin/run.js'), 'utf8')).to.equal(
      'console.log("hello");\n',
    );
    expect(sha256Hex(await readFile(join(staged.directory, 'artifact.tgz')))).to.equal(sha256);
    const tree = await diskTree(staged.directory);
    expect(tree.listing.hash).to.equal(staged.manifest.treeHash);
    expect(tree.writable).to.deep.equal([]);
    for (const file of [
      'package/bin/run.js',
      'package/package.json',
      'package/fleet-build.json',
      'artifact.tgz',
      'generation.json',
    ]) {
      expect((await stat(join(staged.directory, file))).mode & 0o777, file).to.equal(0o444);
    }
    for (const dir of ['', 'package', 'package/bin']) {
      expect((await stat(join(staged.directory, dir))).mode & 0o777, dir || '.').to.equal(0o555);
    }
    expect((await verifyGeneration(layout, sha256)).ok).to.equal(true);
    expect(await generations()).to.deep.equal([sha256]); // no temp directory left
  });

  it('stages files 0444 under a restrictive umask too (the controller unit runs with UMask=0077)', async () => {
    const previous = process.umask(0o077);
    try {
      const a = await artifact(runtimePackage());
      const staged = await stage(a);
      const dir = layout.generation(staged.buildId);
      expect((await stat(join(dir, 'package', 'package.json'))).mode & 0o777).to.equal(0o444);
      expect((await verifyGeneration(layout, staged.buildId)).ok).to.equal(true);
    } finally {
      process.umask(previous);
    }
  });

  it("records the commit the artifact's build record names, never the one a caller claims", async () => {
    const recorded = await artifact(
      [...runtimePackage(), { path: 'package/fleet-build.json', data: buildRecord(COMMIT, true) }],
      'recorded.tgz',
    );
    const claimed = await rejection(
      stageGeneration({
        home,
        platform: 'linux',
        artifact: recorded.path,
        sha256: recorded.sha256,
        commit: OTHER,
      }),
    );
    expect(claimed.code).to.equal('GENERATION_INVALID');
    expect(claimed.message).to.equal(
      `the request expects commit ${OTHER}, but the artifact was built from ${COMMIT}-dirty; nothing staged`,
    );
    expect(await generations()).to.deep.equal([]);
    const staged = await stageGeneration({
      home,
      platform: 'linux',
      artifact: recorded.path,
      sha256: recorded.sha256,
      commit: `${COMMIT}-dirty`,
    });
    expect(staged.manifest.commit).to.equal(`${COMMIT}-dirty`);
    // reused, the generation answers for the commit it recorded when it was staged
    const again = await rejection(
      stageGeneration({
        home,
        platform: 'linux',
        artifact: recorded.path,
        sha256: recorded.sha256,
        commit: COMMIT,
      }),
    );
    expect(again.message).to.contain(`generations/${recorded.sha256} records ${COMMIT}-dirty`);

    const unrecorded = await artifact(runtimePackage('@fleet/cli', '1.0.1'), 'unrecorded.tgz');
    expect((await stage(unrecorded)).manifest.commit).to.equal(null);
    const malformed = await artifact(
      [
        ...runtimePackage('@fleet/cli', '1.0.2'),
        { path: 'package/fleet-build.json', data: '{"commit":"9c1e"}' },
      ],
      'malformed.tgz',
    );
    expect((await rejection(stage(malformed))).message).to.contain(
      'package/fleet-build.json is not a build record',
    );
  });

  it('reuses an identical generation without writing anything', async () => {
    const a = await artifact(runtimePackage());
    const first = await stage(a);
    const before = await stat(join(first.directory, 'generation.json'));
    const second = await stage(a);
    expect(second.reused).to.equal(true);
    expect(second.manifest).to.deep.equal(first.manifest);
    expect((await stat(join(first.directory, 'generation.json'))).mtimeMs).to.equal(before.mtimeMs);
  });

  it('refuses a payload whose sha256 differs from the manifest: GENERATION_INVALID, nothing staged, nothing flipped', async () => {
    const good = await artifact(runtimePackage('@fleet/cli', '1.0.0'), 'good.tgz');
    await stage(good);
    const pointer = currentPointer(layout, 'symlink');
    await pointer.flip(good.sha256);

    const next = await artifact(runtimePackage('@fleet/cli', '1.1.0'), 'next.tgz');
    await writeFile(
      next.path,
      makeTgz(runtimePackage('@fleet/cli', '1.1.0', 'console.log("tampered");\n')),
    );
    const error = await rejection(stage(next));
    expect(error.code).to.equal('GENERATION_INVALID');
    expect(error.message).to.match(/differs from the expected .*nothing staged/);
    expect(await generations()).to.deep.equal([good.sha256]);
    expect(await readCurrentPointer(layout)).to.include({ state: 'set', buildId: good.sha256 });
  });

  it('never overwrites an existing generation that does not match: GENERATION_INVALID', async () => {
    const a = await artifact(runtimePackage());
    const squatter = layout.generation(a.sha256);
    await mkdir(join(squatter, 'package'), { recursive: true });
    await writeFile(join(squatter, 'package/evil.js'), 'evil');
    const error = await rejection(stage(a));
    expect(error.code).to.equal('GENERATION_INVALID');
    expect(error.message).to.contain('never overwritten');
    expect(await readFile(join(squatter, 'package/evil.js'), 'utf8')).to.equal('evil');
  });

  it('detects a staged generation changed afterwards (tree hash, modes) and refuses to reuse it', async () => {
    const a = await artifact(runtimePackage());
    const staged = await stage(a);
    const script = join(staged.directory, 'package/bin/run.js');
    await chmod(join(staged.directory, 'package/bin'), 0o755);
    await chmod(script, 0o644);
    await writeFile(script, 'console.log("edited");\n');
    const check = await verifyGeneration(layout, a.sha256);
    expect(check.ok).to.equal(false);
    const problems = check.ok ? [] : check.problems;
    expect(problems.join('\n'))
      .to.match(/tree hash .* differs/)
      .and.match(/writable \(not 0444\/0555\): package\/bin, package\/bin\/run.js/);
    expect((await rejection(stage(a))).code).to.equal('GENERATION_INVALID');
  });

  const hostile: [string, FixtureEntry[], RegExp][] = [
    [
      'a symbolic link',
      [...runtimePackage(), { path: 'package/link', type: '2', linkname: '/etc/passwd' }],
      /is a symbolic link; refused/,
    ],
    [
      'a hard link',
      [...runtimePackage(), { path: 'package/hard', type: '1', linkname: 'package/package.json' }],
      /is a hard link; refused/,
    ],
    ['a FIFO', [...runtimePackage(), { path: 'package/fifo', type: '6' }], /is a FIFO; refused/],
    [
      'a .. component',
      [...runtimePackage(), { path: 'package/../../escape.js', data: 'x' }],
      /"\.\." component/,
    ],
    [
      'an absolute path',
      [...runtimePackage(), { path: '/tmp/escape.js', data: 'x' }],
      /is absolute/,
    ],
    [
      'a duplicated path',
      [...runtimePackage(), { path: 'package/bin/run.js', data: 'second' }],
      /appears twice/,
    ],
    [
      'a name fleet reserves',
      [...runtimePackage(), { path: 'generation.json', data: '{}' }],
      /name fleet reserves/,
    ],
    [
      'a file used as a directory',
      [...runtimePackage(), { path: 'package/README.md/x', data: 'x' }],
      /inside a file/,
    ],
  ];
  for (const [what, entries, message] of hostile) {
    it(`refuses a tarball with ${what}: GENERATION_INVALID, nothing staged`, async () => {
      const a = await artifact(entries);
      const error = await rejection(stage(a));
      expect(error.code).to.equal('GENERATION_INVALID');
      expect(error.message).to.match(message);
      expect(await generations()).to.deep.equal([]);
    });
  }

  it('refuses a tarball with a bad header checksum and a file that is not a tarball', async () => {
    const data = Buffer.from(makeTgz(runtimePackage()));
    const { gunzipSync, gzipSync } = await import('node:zlib');
    const tar = gunzipSync(data);
    tar[10] = (tar[10] ?? 0) ^ 0xff;
    const bad = join(artifacts, 'bad.tgz');
    await writeFile(bad, gzipSync(tar));
    expect(
      (
        await rejection(
          stageGeneration({
            home,
            platform: 'linux',
            artifact: bad,
            sha256: sha256Hex(await readFile(bad)),
          }),
        )
      ).message,
    ).to.match(/bad header checksum/);
    await writeFile(bad, 'not gzip');
    expect(
      (
        await rejection(
          stageGeneration({
            home,
            platform: 'linux',
            artifact: bad,
            sha256: sha256Hex('not gzip'),
          }),
        )
      ).message,
    ).to.match(/not a gzip'd tarball/);
  });

  it('accepts long names from pax headers', async () => {
    const long = `package/${'d'.repeat(120)}/file.js`;
    const a = await artifact([
      ...runtimePackage(),
      paxPath(long),
      { path: 'ignored-by-pax', data: 'long' },
    ]);
    const staged = await stage(a);
    expect(await readFile(join(staged.directory, ...long.split('/')), 'utf8')).to.equal('long');
  });

  it('sweeps a staging directory a crash left behind, and leaves none after a failure', async () => {
    await mkdir(join(layout.generations, '.fleet-tmp-stage-leftover/package'), {
      recursive: true,
      mode: 0o700,
    });
    await chmod(join(layout.generations, '.fleet-tmp-stage-leftover'), 0o555);
    const a = await artifact(runtimePackage());
    await stage(a);
    expect(await generations()).to.deep.equal([a.sha256]);

    const other = await artifact(runtimePackage('@fleet/cli', '2.0.0'), 'other.tgz');
    process.env['FLEET_FAILPOINT'] = 'runtime.stage.before_rename:throw';
    try {
      expect((await rejection(stage(other))).code).to.equal('IO_ERROR');
    } finally {
      delete process.env['FLEET_FAILPOINT'];
    }
    expect(await generations()).to.deep.equal([a.sha256]);
  });

  it('refuses an expected build id that is not a sha256', async () => {
    const a = await artifact(runtimePackage());
    expect((await rejection(stage(a, 'abc'))).code).to.equal('GENERATION_INVALID');
    expect(await lstat(layout.generations).catch(() => null)).to.equal(null);
  });
});
