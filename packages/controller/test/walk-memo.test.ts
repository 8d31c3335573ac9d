/**
 * One walk per directory per request (`WalkMemo`, `fs/parent-walk.ts`; contract §14, "means"): a
 * request reading several files under the same directories lstats each directory once — and a
 * directory swapped for a symbolic link after that walk is still refused for every later file
 * (catalogue B: symlinks and races), by the fd's real path and the re-check after the read.
 *
 * A snapshot's reads go through a `ReadSession`: each file read once for the request (a prober
 * asking for a file the snapshot read gets the same read). On Linux each read is first proved by
 * its fd alone (the fd's real path is the expected one: no walk, nothing to re-check); a read the
 * proof does not cover, and every read where there is no `/proc/self/fd` (`provedByFd: false`
 * here), walks its directories and re-checks each once after the last read — a directory that
 * changed refuses every file the request read under it.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '@fleet/core';
import type { WalkMemo } from '../src/fs/parent-walk.js';
import { ReadSession, readLive, targetOf } from '../src/fs/safe-path.js';

const LIMIT = 1024 * 1024;

/**
 * A home with ~/.config/app/a.conf and b.conf and an empty ~/.config/elsewhere, a directory
 * outside the home, and `more` files (path under the root → content).
 */
async function makeTree(
  prefix: string,
  more: Record<string, string>,
): Promise<{ root: string; home: string; outside: string }> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const home = join(root, 'home');
  const outside = join(root, 'outside');
  await mkdir(join(home, '.config', 'app'), { recursive: true });
  await mkdir(join(home, '.config', 'elsewhere'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(home, '.config', 'app', 'a.conf'), 'a\n');
  await writeFile(join(home, '.config', 'app', 'b.conf'), 'b\n');
  for (const [path, content] of Object.entries(more)) await writeFile(join(root, path), content);
  return { root, home, outside };
}

describe('safe-path: the directories of one request walked once', () => {
  let root: string;
  let home: string;
  let outside: string;

  beforeEach(async () => {
    ({ root, home, outside } = await makeTree('fleet-walk-memo-', {
      'home/.config/elsewhere/b.conf': 'inside\n',
      'outside/b.conf': 'planted\n',
    }));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const read = (path: string, memo: WalkMemo) => readLive(home, targetOf(home, path), LIMIT, memo);

  async function refusal(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof FleetError) return error.code;
      throw error;
    }
    return expect.fail('expected the read to be refused');
  }

  it('remembers each directory it found real, and reads every file as without it', async () => {
    const memo: WalkMemo = new Map();
    const a = await read('~/.config/app/a.conf', memo);
    expect([...memo.keys()]).to.deep.equal([
      home,
      join(home, '.config'),
      join(home, '.config', 'app'),
    ]);
    const b = await read('~/.config/app/b.conf', memo);
    expect(a?.bytes.toString()).to.equal('a\n');
    expect(b?.bytes.toString()).to.equal('b\n');
    expect(b?.chain.dirs.map((d) => d.path)).to.deep.equal([...memo.keys()]);
    expect(await read('~/.config/app/none.conf', memo)).to.equal(null);
  });

  it('refuses a later file whose walked parent became a symbolic link out of the home', async () => {
    const memo: WalkMemo = new Map();
    await read('~/.config/app/a.conf', memo);
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await symlink(outside, join(home, '.config', 'app'));
    expect(await refusal(read('~/.config/app/b.conf', memo))).to.be.oneOf([
      'PATH_OUTSIDE_ROOT',
      'SYMLINK_REFUSED',
    ]);
  });

  it('refuses a later file whose walked parent became a symbolic link inside the home', async () => {
    const memo: WalkMemo = new Map();
    await read('~/.config/app/a.conf', memo);
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await symlink(join(home, '.config', 'elsewhere'), join(home, '.config', 'app'));
    expect(await refusal(read('~/.config/app/b.conf', memo))).to.equal('SYMLINK_REFUSED');
  });

  it('refuses a later file whose walked parent was replaced by another real directory', async () => {
    const memo: WalkMemo = new Map();
    await read('~/.config/app/a.conf', memo);
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await mkdir(join(home, '.config', 'app'));
    await writeFile(join(home, '.config', 'app', 'b.conf'), 'swapped\n');
    expect(await refusal(read('~/.config/app/b.conf', memo))).to.equal('SYMLINK_REFUSED');
  });
});

describe('safe-path ReadSession, walked: the reads of one request, re-checked once after the last', () => {
  let root: string;
  let home: string;
  let outside: string;

  beforeEach(async () => {
    ({ root, home, outside } = await makeTree('fleet-read-session-', {
      'home/.config/elsewhere/c.conf': 'c\n',
      'outside/a.conf': 'planted\n',
    }));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const target = (path: string) => targetOf(home, path);

  it('reads a file once per session: a second ask answers the first read, a new session the file now', async () => {
    const session = new ReadSession(home, LIMIT);
    expect((await session.read(target('~/.config/app/a.conf')))?.bytes.toString()).to.equal('a\n');
    await writeFile(join(home, '.config', 'app', 'a.conf'), 'changed\n');
    expect((await session.read(target('~/.config/app/a.conf')))?.bytes.toString()).to.equal('a\n');
    const next = new ReadSession(home, LIMIT);
    expect((await next.read(target('~/.config/app/a.conf')))?.bytes.toString()).to.equal(
      'changed\n',
    );
  });

  it('refuses nothing when no directory changed, and an absent file is simply absent', async () => {
    const session = new ReadSession(home, LIMIT);
    await session.read(target('~/.config/app/a.conf'));
    await session.read(target('~/.config/app/b.conf'));
    await session.read(target('~/.config/elsewhere/c.conf'));
    expect(await session.read(target('~/.config/app/none.conf'))).to.equal(null);
    expect(await session.read(target('~/.config/none/x.conf'))).to.equal(null);
    expect((await session.recheck()).size).to.equal(0);
  });

  it('refuses every file read under a directory swapped for a symbolic link after the reads', async () => {
    const session = new ReadSession(home, LIMIT, { provedByFd: false });
    await session.read(target('~/.config/app/a.conf'));
    await session.read(target('~/.config/app/b.conf'));
    await session.read(target('~/.config/elsewhere/c.conf'));
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await symlink(outside, join(home, '.config', 'app'));
    const refused = await session.recheck();
    expect([...refused.keys()].sort()).to.deep.equal([
      join(home, '.config', 'app', 'a.conf'),
      join(home, '.config', 'app', 'b.conf'),
    ]);
    for (const error of refused.values()) {
      expect(error).to.be.instanceOf(FleetError);
      expect((error as FleetError).code).to.equal('SYMLINK_REFUSED');
      expect(error.message).to.contain('~/.config/app changed during the operation');
    }
  });

  it('refuses the files under a directory replaced by another real directory, and only those', async () => {
    const session = new ReadSession(home, LIMIT, { provedByFd: false });
    await session.read(target('~/.config/app/a.conf'));
    await session.read(target('~/.config/elsewhere/c.conf'));
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await mkdir(join(home, '.config', 'app'));
    await writeFile(join(home, '.config', 'app', 'a.conf'), 'a\n');
    const refused = await session.recheck();
    expect([...refused.keys()]).to.deep.equal([join(home, '.config', 'app', 'a.conf')]);
    expect((refused.get(join(home, '.config', 'app', 'a.conf')) as FleetError).code).to.equal(
      'SYMLINK_REFUSED',
    );
  });

  it('still refuses, at the read, a parent that is a symbolic link when first walked', async () => {
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await symlink(outside, join(home, '.config', 'app'));
    const session = new ReadSession(home, LIMIT);
    expect(await refusal(session.read(target('~/.config/app/a.conf')))).to.be.oneOf([
      'PATH_OUTSIDE_ROOT',
      'SYMLINK_REFUSED',
    ]);
  });

  async function refusal(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof FleetError) return error.code;
      throw error;
    }
    return expect.fail('expected the read to be refused');
  }
});

describe('safe-path ReadSession, proved by the fd (Linux): no walk, and refused as the walk refuses', () => {
  let root: string;
  let home: string;
  let outside: string;

  before(function () {
    if (process.platform !== 'linux') this.skip(); // the proof reads /proc/self/fd
  });
  beforeEach(async () => {
    ({ root, home, outside } = await makeTree('fleet-read-proved-', {
      'home/.config/elsewhere/a.conf': 'inside\n',
      'outside/a.conf': 'planted\n',
    }));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const target = (path: string) => targetOf(home, path);

  it('reads the file that was at its path when opened, and has no directory to re-check', async () => {
    const session = new ReadSession(home, LIMIT);
    const a = await session.read(target('~/.config/app/a.conf'));
    expect(a?.bytes.toString()).to.equal('a\n');
    expect(a?.chain.dirs).to.deep.equal([]);
    // Swapped after the open: the bytes read were the real file's, so nothing is refused (the
    // walked session above refuses them, having only its re-check to prove the open).
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await symlink(outside, join(home, '.config', 'app'));
    expect((await session.recheck()).size).to.equal(0);
  });

  it('refuses a parent that is a symbolic link out of the home at the open', async () => {
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await symlink(outside, join(home, '.config', 'app'));
    const session = new ReadSession(home, LIMIT);
    expect(await refusal(session.read(target('~/.config/app/a.conf')))).to.equal(
      'PATH_OUTSIDE_ROOT',
    );
  });

  it('refuses a parent that is a symbolic link inside the home at the open', async () => {
    await rename(join(home, '.config', 'app'), join(root, 'moved'));
    await symlink(join(home, '.config', 'elsewhere'), join(home, '.config', 'app'));
    const session = new ReadSession(home, LIMIT);
    expect(await refusal(session.read(target('~/.config/app/a.conf')))).to.equal('SYMLINK_REFUSED');
  });

  it('refuses a file that is a symbolic link, and answers an absent file or parent as absent', async () => {
    await symlink(join(home, '.config', 'app', 'a.conf'), join(home, '.config', 'app', 'c.conf'));
    const session = new ReadSession(home, LIMIT);
    expect(await refusal(session.read(target('~/.config/app/c.conf')))).to.equal('SYMLINK_REFUSED');
    expect(await session.read(target('~/.config/app/none.conf'))).to.equal(null);
    expect(await session.read(target('~/.config/none/x.conf'))).to.equal(null);
  });

  it('refuses a file over the bound, as the walked read does', async () => {
    const session = new ReadSession(home, 1);
    expect(await refusal(session.read(target('~/.config/app/a.conf')))).to.equal('FILE_TOO_LARGE');
  });

  async function refusal(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof FleetError) return error.code;
      throw error;
    }
    return expect.fail('expected the read to be refused');
  }
});
