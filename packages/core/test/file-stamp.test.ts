/**
 * fileStamp (src/file-stamp.ts): what tells one version of a file from another without reading it
 * — the controller re-reads its env chain, token store and record of writes only when it changes.
 */
import { chmod, mkdtemp, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { fileStamp } from '@fleet/core';

describe('fileStamp', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-file-stamp-'));
    await writeFile(join(dir, 'a'), 'one\n');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const stamp = (name: string, follow = true) => fileStamp(join(dir, name), { follow });

  it('is null for nothing there, and the same while the file is unchanged', () => {
    expect(stamp('absent')).to.equal(null);
    expect(stamp('absent', false)).to.equal(null);
    expect(stamp('a')).to.be.a('string').and.equal(stamp('a'));
  });

  const changes: [string, () => Promise<void>, boolean?][] = [
    // From an old modification time, so the write moves it whatever the clock's tick.
    ['a write of the same length', () => writeFile(join(dir, 'a'), 'two\n'), true],
    ['a chmod', () => chmod(join(dir, 'a'), 0o600)],
    [
      'a rename over the name',
      async () => {
        await writeFile(join(dir, 'b'), 'one\n');
        await rename(join(dir, 'b'), join(dir, 'a'));
      },
    ],
  ];
  for (const [what, change, aged] of changes) {
    it(`changes with ${what}`, async () => {
      if (aged) await utimes(join(dir, 'a'), new Date(0), new Date(0));
      const before = stamp('a');
      await change();
      expect(stamp('a')).to.not.equal(before);
    });
  }

  it('stamps a symbolic link itself, or what it points to when followed', async () => {
    await symlink(join(dir, 'a'), join(dir, 'link'));
    expect(stamp('link')).to.equal(stamp('a'));
    expect(stamp('link', false)).to.not.equal(stamp('a'));
  });

  it('is null for a name below a file, on every Node (Node 20 throws ENOTDIR, Node 24 does not)', () => {
    expect(stamp('a/below')).to.equal(null);
    expect(stamp('a/below', false)).to.equal(null);
  });

  it('throws for a failure other than nothing there', async () => {
    // A link to itself: ELOOP when followed, and it holds as root, where a denied mode would not.
    await symlink(join(dir, 'loop'), join(dir, 'loop'));
    expect(() => stamp('loop')).to.throw(/ELOOP/);
    expect(stamp('loop', false)).to.be.a('string');
  });
});
