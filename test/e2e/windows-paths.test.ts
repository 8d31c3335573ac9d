/**
 * The Windows path budget on the real runtime artifact (docs/runtime-lifecycle.md, "Windows paths";
 * reliability catalogue 59): `npm pack -w packages/cli`, as a release packs it, staged by the
 * controller's own staging in the Windows layout. Every path below the runtime root — in the
 * generation and in the staging directory it is unpacked in — stays within
 * WIN32_GENERATION_PATH_BUDGET, so that under a root of up to WIN32_ROOT_BUDGET characters
 * (`C:\Users\<profile>\AppData\Local\fleet\runtime`) no path reaches MAX_PATH. A dependency that
 * adds a deeper path fails this test before it fails on a Windows node.
 */
import { expect } from 'chai';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { removeTree, stageGeneration, stagingName } from '@fleet/controller';
import {
  runtimeLayout,
  WIN32_GENERATION_NAME_LENGTH,
  WIN32_GENERATION_PATH_BUDGET,
  WIN32_MAX_PATH_CHARS,
  WIN32_ROOT_BUDGET,
} from '@fleet/core';
import { packedRuntimeArtifact } from '../src/artifact.js';
import { tempDir } from '../src/fleet.js';

/** Every file and directory below `dir`, as paths relative to `from`. */
async function allPaths(dir: string, from: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    out.push(relative(from, path));
    if (entry.isDirectory()) out.push(...(await allPaths(path, from)));
  }
  return out;
}

describe('the Windows path budget on the packed runtime artifact', function () {
  this.timeout(300_000);
  let home: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    home = await tempDir('fleet-win-paths-');
  });
  after(async () => {
    await removeTree(home.path).catch(() => undefined);
    await home.cleanup();
  });

  it('keeps every path of a staged generation within the budget below the runtime root', async () => {
    const artifact = await packedRuntimeArtifact();
    const staged = await stageGeneration({
      home: home.path,
      platform: 'win32',
      artifact: artifact.path,
      sha256: artifact.sha256,
    });
    const layout = runtimeLayout(home.path, 'win32');
    const name = relative(layout.generations, staged.directory);
    expect(name).to.equal(artifact.sha256.slice(0, WIN32_GENERATION_NAME_LENGTH));

    const paths = await allPaths(staged.directory, layout.root);
    expect(paths.length).to.be.greaterThan(1000);
    const longest = paths.reduce((a, b) => (b.length > a.length ? b : a));
    // The staging directory holds the same tree under a name at most this much longer.
    const staging = Math.max(0, stagingName().length - name.length);
    const budgetUsed = longest.length + staging;
    expect(budgetUsed, `longest: ${longest}`).to.be.at.most(WIN32_GENERATION_PATH_BUDGET);
    // With the root's own budget, a backslash between them: room to spare under MAX_PATH.
    expect(WIN32_ROOT_BUDGET + 1 + budgetUsed).to.be.at.most(WIN32_MAX_PATH_CHARS - 25);
  });
});
