/**
 * Runtime generations in the Windows layout (docs/runtime-lifecycle.md, "Windows paths"; reliability
 * catalogue 59): a generation's directory is the build id's first 16 hex digits, so that the paths
 * of a real artifact stay inside MAX_PATH; the pointer file, the build identity and the runtime
 * status still name the full build id; a short-name collision is refused, never written over; and
 * an artifact whose paths would not fit under this node's root is refused before anything is
 * written. Staged on real temp dirs (the layout is a function of the platform, not of this OS).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  isFleetError,
  readCurrentPointer,
  runtimeLayout,
  WIN32_GENERATION_NAME_LENGTH,
  WIN32_MAX_PATH_CHARS,
} from '@fleet/core';
import { buildIdentityOf } from '../src/build-identity.js';
import { removeTree, stageGeneration } from '../src/generations/generation.js';
import { verifyGeneration } from '../src/generations/verify.js';
import { currentPointer } from '../src/generations/pointer.js';
import { sha256Hex } from '../src/generations/tree.js';
import { makeTgz, runtimePackage, type FixtureEntry } from './support/tar.js';

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    expect(isFleetError(error), String(error)).to.equal(true);
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('runtime generations in the Windows layout', () => {
  let home: string;
  let artifacts: string;

  async function artifact(entries: readonly FixtureEntry[], name = 'fleet.tgz') {
    const data = makeTgz(entries);
    const path = join(artifacts, name);
    await writeFile(path, data);
    return { path, sha256: sha256Hex(data) };
  }
  const stageWin = (a: { path: string; sha256: string }, at = home) =>
    stageGeneration({ home: at, platform: 'win32', artifact: a.path, sha256: a.sha256 });

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-win-'));
    artifacts = await mkdtemp(join(tmpdir(), 'fleet-win-artifacts-'));
  });
  afterEach(async () => {
    await removeTree(home);
    await rm(artifacts, { recursive: true, force: true });
  });

  it('names the generation directory with the first 16 hex digits of the build id', async () => {
    const a = await artifact(runtimePackage());
    const staged = await stageWin(a);
    const layout = runtimeLayout(home, 'win32');
    expect(await readdir(layout.generations)).to.deep.equal([a.sha256.slice(0, 16)]);
    expect(WIN32_GENERATION_NAME_LENGTH).to.equal(16);
    expect(staged.directory).to.equal(join(layout.generations, a.sha256.slice(0, 16)));
    expect(staged.manifest.buildId).to.equal(a.sha256);
    expect((await verifyGeneration(layout, a.sha256)).ok).to.equal(true);
    // The Linux layout keeps the full build id.
    const linux = await stageGeneration({
      home,
      platform: 'linux',
      artifact: a.path,
      sha256: a.sha256,
    });
    expect(linux.directory).to.equal(runtimeLayout(home, 'linux').generation(a.sha256));
    expect(linux.directory.endsWith(a.sha256)).to.equal(true);
  });

  it('keeps the full build id in the pointer file and in the build identity of its runtime', async () => {
    const a = await artifact(runtimePackage());
    const staged = await stageWin(a);
    const layout = runtimeLayout(home, 'win32');
    await currentPointer(layout, 'file').flip(a.sha256);
    expect(await readFile(layout.current, 'utf8')).to.equal(`generations/${a.sha256}\n`);
    expect(await readCurrentPointer(layout)).to.deep.include({ state: 'set', buildId: a.sha256 });
    const identity = await buildIdentityOf(join(staged.directory, 'package', 'bin', 'run.js'));
    expect(identity.sha256).to.equal(a.sha256);
  });

  it('refuses a build whose short name is taken by another generation, and never writes over it', async () => {
    const a = await artifact(runtimePackage());
    const layout = runtimeLayout(home, 'win32');
    // Another build's generation under the same 16 digits (a prefix collision, made by hand).
    const taken = layout.generation(a.sha256);
    await mkdir(taken, { recursive: true });
    const other = `${a.sha256.slice(0, 16)}${'0'.repeat(48)}`;
    await writeFile(join(taken, 'generation.json'), `${JSON.stringify({ buildId: other })}\n`);
    const error = await rejection(stageWin(a));
    expect(error.code).to.equal('GENERATION_INVALID');
    expect(error.message).to.contain('never overwritten');
    expect(await readdir(taken)).to.deep.equal(['generation.json']);
  });

  it('refuses an artifact whose paths would pass MAX_PATH under this root: nothing written', async () => {
    // A home so deep that generations\<16>\package\… passes 259 characters.
    let deep = home;
    while (runtimeLayout(deep, 'win32').generations.length < WIN32_MAX_PATH_CHARS - 60) {
      deep = join(deep, 'a-rather-long-directory-name');
    }
    await mkdir(deep, { recursive: true });
    const a = await artifact([
      ...runtimePackage(),
      { path: `package/node_modules/${'x'.repeat(30)}/index.js`, data: 'x' },
    ]);
    const error = await rejection(stageWin(a, deep));
    expect(error.code).to.equal('GENERATION_INVALID');
    expect(error.message).to.match(/past the 259 a Windows path may have; nothing staged$/);
    expect(await readdir(deep)).to.deep.equal([]);
    // The same artifact under a short home stages.
    expect((await stageWin(a)).reused).to.equal(false);
  });
});
