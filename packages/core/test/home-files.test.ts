/**
 * Core's home-file reader, the floor a plugin's node half reads its own files through when the
 * host hands it no `ctx.files` (src/home-files.ts): real files, directories, symlinks and a FIFO
 * in a throwaway home.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFleetError } from '../src/errors.js';
import { createHomeFileReader, HOME_FILE_READ_LIMIT, readHomeFile } from '../src/home-files.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  throw new Error('expected the read to be refused');
}

describe('core home-file reader (a node half without ctx.files)', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-home-files-'));
    await mkdir(join(home, '.config', 'router'), { recursive: true });
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('answers a regular file with its bytes and their sha256', async () => {
    await writeFile(join(home, '.config', 'router', 'router.yaml'), 'listen: 8080\n');
    const live = await createHomeFileReader(home).read('~/.config/router/router.yaml');
    expect(Buffer.from(live?.content ?? []).toString()).to.equal('listen: 8080\n');
    expect(live?.sha256).to.equal(createHash('sha256').update('listen: 8080\n').digest('hex'));
  });

  for (const [name, path] of [
    ['an absent file', '~/.config/router/absent.yaml'],
    ['a file under an absent directory', '~/.config/absent/router.yaml'],
  ] as const) {
    it(`answers null for ${name}`, async () => {
      expect(await readHomeFile(home, path)).to.equal(null);
    });
  }

  it('answers null for a file under a regular file (ENOTDIR)', async () => {
    await writeFile(join(home, 'plain'), 'x');
    expect(await readHomeFile(home, '~/plain/router.yaml')).to.equal(null);
  });

  it('refuses a final symlink without following it (SYMLINK_REFUSED)', async () => {
    await writeFile(join(home, 'secret'), 'not the router config');
    await symlink(join(home, 'secret'), join(home, '.config', 'router', 'router.yaml'));
    expect(await codeOf(readHomeFile(home, '~/.config/router/router.yaml'))).to.equal(
      'SYMLINK_REFUSED',
    );
  });

  it('refuses a directory (NOT_REGULAR_FILE)', async () => {
    expect(await codeOf(readHomeFile(home, '~/.config/router'))).to.equal('NOT_REGULAR_FILE');
  });

  it('refuses a FIFO without blocking on its open (NOT_REGULAR_FILE)', async function () {
    if (process.platform === 'win32') this.skip();
    execFileSync('mkfifo', [join(home, '.config', 'router', 'router.yaml')]);
    expect(await codeOf(readHomeFile(home, '~/.config/router/router.yaml'))).to.equal(
      'NOT_REGULAR_FILE',
    );
  });

  for (const path of ['~/../etc/passwd', '/etc/passwd', '~/.config//router.yaml', '~/a\\b']) {
    it(`refuses ${JSON.stringify(path)} before any filesystem call (PATH_INVALID)`, async () => {
      expect(await codeOf(readHomeFile(home, path))).to.equal('PATH_INVALID');
    });
  }

  it('reads a file of exactly the bound, and refuses one byte more (FILE_TOO_LARGE)', async () => {
    await writeFile(join(home, 'at'), Buffer.alloc(16, 0x61));
    await writeFile(join(home, 'over'), Buffer.alloc(17, 0x61));
    expect((await readHomeFile(home, '~/at', 16))?.content.length).to.equal(16);
    expect(await codeOf(readHomeFile(home, '~/over', 16))).to.equal('FILE_TOO_LARGE');
  });

  it('bounds a read at the controller default file bound, 1 MiB', async () => {
    expect(HOME_FILE_READ_LIMIT).to.equal(1024 * 1024);
    await writeFile(join(home, 'big'), Buffer.alloc(HOME_FILE_READ_LIMIT + 1, 0x61));
    expect(await codeOf(createHomeFileReader(home).read('~/big'))).to.equal('FILE_TOO_LARGE');
  });
});
