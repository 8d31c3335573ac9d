/**
 * The tree hash of a generation (contract §12): the pure listing hash as a table of cases, and the
 * walk of a real directory — what it hashes, what it calls writable, what it calls foreign.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { diskTree, sha256Hex, treeHash, type TreeEntry } from '../src/generations/tree.js';

const run = promisify(execFile);
const file = (path: string, text: string): TreeEntry => ({
  path,
  type: 'file',
  sha256: sha256Hex(text),
  size: Buffer.byteLength(text),
});
const dir = (path: string): TreeEntry => ({ path, type: 'directory' });

describe('generation tree hash', () => {
  describe('treeHash (pure)', () => {
    const nested = [file('package/lib/deep/a.js', 'a'), file('package/b.js', 'b')];
    const cases: { name: string; left: TreeEntry[]; right: TreeEntry[]; same: boolean }[] = [
      {
        name: 'parents implied by file paths equal parents listed',
        left: nested,
        right: [dir('package'), dir('package/lib'), dir('package/lib/deep'), ...nested],
        same: true,
      },
      {
        name: 'a parent listed after its children changes nothing',
        left: [...nested, dir('package/lib')],
        right: nested,
        same: true,
      },
      {
        name: 'the order of entries does not matter',
        left: nested,
        right: [...nested].reverse(),
        same: true,
      },
      {
        name: 'an empty directory counts',
        left: nested,
        right: [...nested, dir('package/empty')],
        same: false,
      },
      {
        name: 'one byte of content counts',
        left: nested,
        right: [file('package/lib/deep/a.js', 'A'), file('package/b.js', 'b')],
        same: false,
      },
      {
        name: 'a file moved to another directory counts',
        left: nested,
        right: [file('package/lib/a.js', 'a'), file('package/b.js', 'b')],
        same: false,
      },
    ];
    for (const { name, left, right, same } of cases) {
      it(name, () => {
        expect(treeHash(left).hash === treeHash(right).hash).to.equal(same);
      });
    }

    it('counts files and their bytes, not directories', () => {
      const listing = treeHash([dir('package'), ...nested]);
      expect(listing.files).to.equal(2);
      expect(listing.bytes).to.equal(2);
    });
  });

  describe('diskTree (a real directory)', () => {
    let root: string;
    beforeEach(async () => {
      root = await mkdtemp(join(tmpdir(), 'fleet-tree-'));
    });
    afterEach(async () => {
      await run('chmod', ['-R', 'u+w', root]);
      await rm(root, { recursive: true, force: true });
    });

    it('hashes each file as sha256sum does, a file over the 1 MiB read buffer included', async () => {
      await mkdir(join(root, 'package', 'lib'), { recursive: true });
      const large = Buffer.alloc(3 * (1 << 20) + 17, 0x61);
      await writeFile(join(root, 'package', 'lib', 'large.bin'), large);
      await writeFile(join(root, 'package', 'empty.txt'), '');
      await writeFile(join(root, 'package', 'small.js'), 'export {};\n');
      const { stdout } = await run(
        'sha256sum',
        ['package/lib/large.bin', 'package/empty.txt', 'package/small.js'],
        {
          cwd: root,
        },
      );
      const expected: TreeEntry[] = stdout
        .trim()
        .split('\n')
        .map((line) => {
          const [sha256, path] = line.split(/\s+/) as [string, string];
          const size = path.endsWith('large.bin')
            ? large.length
            : path.endsWith('empty.txt')
              ? 0
              : 11;
          return { path, type: 'file', sha256, size };
        });
      const tree = await diskTree(root);
      expect(tree.listing).to.deep.equal(treeHash(expected));
      expect(tree.listing.bytes).to.equal(large.length + 11);
      expect(tree.foreign).to.deep.equal([]);
    });

    it('calls a link and a FIFO foreign without following or opening them', async () => {
      await mkdir(join(root, 'package'));
      await writeFile(join(root, 'outside.txt'), 'not part of the tree');
      await symlink(join(root, 'outside.txt'), join(root, 'package', 'link.js'));
      await run('mkfifo', [join(root, 'package', 'pipe')]);
      const tree = await diskTree(root);
      expect(tree.foreign).to.have.members(['package/link.js', 'package/pipe']);
    });

    it('names files not 0444 and directories not 0555 as writable', async () => {
      await mkdir(join(root, 'package'));
      await writeFile(join(root, 'package', 'kept.js'), 'a');
      await writeFile(join(root, 'package', 'open.js'), 'b');
      await chmod(join(root, 'package', 'kept.js'), 0o444);
      await chmod(join(root, 'package', 'open.js'), 0o644);
      await chmod(join(root, 'package'), 0o555);
      const tree = await diskTree(root);
      expect(tree.writable).to.deep.equal(['package/open.js']);
    });
  });
});
