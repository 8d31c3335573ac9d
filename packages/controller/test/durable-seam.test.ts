/**
 * The calls of the durable write path as production runs them (src/fs/seam.ts; docs/durability.md,
 * "The filesystem seam"): everything but fsync runs synchronously and hands back a settled
 * promise, with the meaning of Node's `FileHandle` — writes and reads from the current position,
 * errors as rejections (never thrown from the call), a second close that does nothing.
 */
import { constants } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { nodeDurableFs } from '../src/fs/seam.js';

const CREATE = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY;

/** The `code` a call's promise rejects with (the call itself must not throw). */
async function rejection(call: () => Promise<unknown>): Promise<string | undefined> {
  let promise: Promise<unknown>;
  try {
    promise = call();
  } catch (error) {
    throw new Error(`threw instead of rejecting: ${String(error)}`);
  }
  return promise.then(
    () => undefined,
    (error: NodeJS.ErrnoException) => error.code,
  );
}

describe('the durable write path: the calls production runs (fs/seam.ts)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-seam-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('writes a file, fsyncs it, sets its mode and closes it once', async () => {
    const file = join(dir, 'new');
    const handle = await nodeDurableFs.open(file, CREATE, 0o600);
    await handle.writeFile('first line\n');
    await handle.writeFile('second\n'); // from the current position, as a FileHandle's
    await handle.chmod(0o640);
    await handle.sync();
    await handle.datasync();
    expect((await handle.stat()).size).to.equal(18);
    await handle.close();
    await handle.close();
    expect(await readFile(file, 'utf8')).to.equal('first line\nsecond\n');
    expect((await stat(file)).mode & 0o777).to.equal(0o640);
  });

  it('appends, cuts back with truncate, and reads by position and from the current one', async () => {
    const file = join(dir, 'journal');
    const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT;
    const handle = await nodeDurableFs.open(file, flags, 0o600);
    await handle.appendFile('one\n');
    await handle.appendFile('two\n');
    await handle.truncate(4);
    const bytes = new Uint8Array(3);
    expect(await handle.read(bytes, 0, 3, 0)).to.deep.equal({ bytesRead: 3 });
    expect(Buffer.from(bytes).toString()).to.equal('one');
    await handle.close();
    const reading = await nodeDurableFs.open(file, constants.O_RDONLY);
    expect(await reading.read(bytes, 0, 2, null)).to.deep.equal({ bytesRead: 2 });
    expect(await reading.readFile('utf8')).to.equal('e\n'); // the rest, from where the read left off
    await reading.close();
    const positioned = await nodeDurableFs.open(file, constants.O_RDWR);
    expect(await positioned.write(Buffer.from('ONE'), 0, 3, 0)).to.deep.equal({ bytesWritten: 3 });
    await positioned.close();
    expect(await readFile(file, 'utf8')).to.equal('ONE\n');
  });

  it('renames, links, unlinks and makes directories', async () => {
    const a = join(dir, 'a');
    await (await nodeDurableFs.open(a, CREATE, 0o600)).close();
    await nodeDurableFs.link(a, join(dir, 'kept'));
    await nodeDurableFs.rename(a, join(dir, 'b'));
    await nodeDurableFs.unlink(join(dir, 'kept'));
    await nodeDurableFs.mkdir(join(dir, 'x', 'y'), { recursive: true, mode: 0o700 });
    expect((await stat(join(dir, 'b'))).nlink).to.equal(1);
    expect((await stat(join(dir, 'x', 'y'))).isDirectory()).to.equal(true);
  });

  it('reports every failure as a rejection with its code, never as a throw', async () => {
    const missing = join(dir, 'missing', 'file');
    expect(await rejection(() => nodeDurableFs.open(missing, CREATE, 0o600))).to.equal('ENOENT');
    expect(await rejection(() => nodeDurableFs.rename(missing, join(dir, 'z')))).to.equal('ENOENT');
    expect(await rejection(() => nodeDurableFs.link(missing, join(dir, 'z')))).to.equal('ENOENT');
    expect(await rejection(() => nodeDurableFs.unlink(missing))).to.equal('ENOENT');
    expect(await rejection(() => nodeDurableFs.mkdir(join(missing, 'd'), {}))).to.equal('ENOENT');
    const file = join(dir, 'once');
    await (await nodeDurableFs.open(file, CREATE, 0o600)).close();
    expect(await rejection(() => nodeDurableFs.open(file, CREATE, 0o600))).to.equal('EEXIST');
    const readOnly = await nodeDurableFs.open(file, constants.O_RDONLY);
    expect(await rejection(() => readOnly.writeFile('x'))).to.equal('EBADF');
    await readOnly.close();
    expect(await rejection(() => readOnly.stat())).to.equal('EBADF');
    expect(await rejection(() => readOnly.sync())).to.equal('EBADF');
  });
});
