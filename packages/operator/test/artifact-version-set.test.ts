/**
 * A runtime artifact whose version was set after packing (`fleet lab build --version`): the
 * operator loads it only when its package says the version its build record says was set, so a
 * hand-edited package.json cannot pass for a lab build of another version.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { makeTgz } from '@fleet/testkit';
import { loadArtifact } from '../src/runtime/artifact.js';

const COMMIT = '9c1e0aa5'.repeat(5);

function artifact(version: string, versionSet?: { from: string; to: string }): Buffer {
  return makeTgz([
    { path: 'package/package.json', data: JSON.stringify({ name: '@fleet/cli', version }) },
    {
      path: 'package/fleet-build.json',
      data: JSON.stringify({
        schema: 'fleet.build/v1',
        commit: COMMIT,
        dirty: false,
        ...(versionSet ? { versionSet: { by: 'fleet lab build', ...versionSet } } : {}),
      }),
    },
  ]);
}

describe('operator: an artifact whose version the lab set', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-artifact-version-set-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function load(name: string, bytes: Buffer, version: string) {
    await writeFile(join(dir, name), bytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return loadArtifact(dir, name, { sha256, commit: COMMIT, version });
  }

  it('loads one whose package says the version its build record set', async () => {
    const loaded = await load(
      'set.tgz',
      artifact('0.2.0', { from: '0.1.0', to: '0.2.0' }),
      '0.2.0',
    );
    expect(loaded.identity.version).to.equal('0.2.0');
    expect(loaded.identity.commit).to.equal(COMMIT);
  });

  it('refuses one whose package says another version than the one set (GENERATION_INVALID)', async () => {
    let error: unknown;
    try {
      await load('edited.tgz', artifact('0.3.0', { from: '0.1.0', to: '0.2.0' }), '0.3.0');
    } catch (caught) {
      error = caught;
    }
    expect(isFleetError(error) && error.code).to.equal('GENERATION_INVALID');
    expect((error as Error).message).to.equal(
      'edited.tgz is version 0.3.0, but its build record says fleet lab build set it to 0.2.0 (from 0.1.0)',
    );
  });
});
