/**
 * writeVerified (core installers/transaction.ts): an installer's writes as one operation — every
 * file written in order, each read back, and on any failure everything already written restored,
 * newest first, and the error thrown. The writer here is an in-memory one as strict as the
 * controller's on what these cases touch: a compare and swap on the expected sha256, a restore
 * that puts the previous bytes back.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { FleetError, isFleetError } from '../src/errors.js';
import type { ReplaceResult, SafeFileWriter } from '../src/interfaces/installer.js';
import { writeVerified } from '../src/installers/transaction.js';

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** In-memory files; `failReplace` paths refuse to be written; `corrupt` paths read back wrong. */
function memoryWriter(options: { failReplace?: string[]; corrupt?: string[] } = {}) {
  const files = new Map<string, Uint8Array>();
  const log: string[] = [];
  const writer: SafeFileWriter = {
    read: (path) => {
      const content = files.get(path);
      if (content === undefined) return Promise.resolve(null);
      const seen = options.corrupt?.includes(path) ? bytes('something else') : content;
      return Promise.resolve({ content: seen, sha256: sha(seen) });
    },
    replace: ({ path, expectedSha256, content }) => {
      const before = files.get(path);
      const beforeSha256 = before === undefined ? null : sha(before);
      if (beforeSha256 !== expectedSha256)
        return Promise.reject(new FleetError('PRECONDITION_FAILED', `${path} changed`));
      if (options.failReplace?.includes(path))
        return Promise.reject(new FleetError('INTERNAL', `${path}: EIO`));
      files.set(path, content);
      log.push(`write ${path}`);
      const result: ReplaceResult & { previous?: Uint8Array } = {
        path,
        beforeSha256,
        afterSha256: sha(content),
        backupPath: null,
        unchanged: false,
        ...(before === undefined ? {} : { previous: before }),
      };
      return Promise.resolve(result);
    },
    restore: (result) => {
      const previous = (result as ReplaceResult & { previous?: Uint8Array }).previous;
      if (previous === undefined) files.delete(result.path);
      else files.set(result.path, previous);
      log.push(`restore ${result.path}`);
      return Promise.resolve();
    },
  };
  return { writer, files, log };
}

const text = (files: Map<string, Uint8Array>, path: string) => {
  const content = files.get(path);
  return content === undefined ? undefined : new TextDecoder().decode(content);
};

describe('writeVerified', () => {
  it('writes every file in order, verifies each and returns the results in order', async () => {
    const { writer, files, log } = memoryWriter();
    const results = await writeVerified(writer, [
      { path: '~/a', expectedSha256: null, content: bytes('A') },
      { path: '~/b', expectedSha256: null, content: bytes('B') },
    ]);
    expect(results.map((r) => r.path)).to.deep.equal(['~/a', '~/b']);
    expect(log).to.deep.equal(['write ~/a', 'write ~/b']);
    expect([text(files, '~/a'), text(files, '~/b')]).to.deep.equal(['A', 'B']);
  });

  it('restores the files already written when a later write fails, and rethrows', async () => {
    const { writer, files, log } = memoryWriter({ failReplace: ['~/b'] });
    files.set('~/a', bytes('old A'));
    const error = await writeVerified(writer, [
      { path: '~/a', expectedSha256: sha(bytes('old A')), content: bytes('A') },
      { path: '~/b', expectedSha256: null, content: bytes('B') },
    ]).catch((e: unknown) => e);
    expect(isFleetError(error) && error.message).to.equal('~/b: EIO');
    expect(log).to.deep.equal(['write ~/a', 'restore ~/a']);
    expect(text(files, '~/a')).to.equal('old A');
    expect(files.has('~/b')).to.equal(false);
  });

  it('says VERIFICATION_FAILED and restores everything, newest first, when a file reads back wrong', async () => {
    const { writer, files, log } = memoryWriter({ corrupt: ['~/b'] });
    const error = await writeVerified(writer, [
      { path: '~/a', expectedSha256: null, content: bytes('A') },
      { path: '~/b', expectedSha256: null, content: bytes('B') },
    ]).catch((e: unknown) => e);
    expect(isFleetError(error) && error.code).to.equal('VERIFICATION_FAILED');
    expect(log).to.deep.equal(['write ~/a', 'write ~/b', 'restore ~/b', 'restore ~/a']);
    expect(files.size).to.equal(0);
  });

  it('reads back through the readBack it is given', async () => {
    const { writer, log } = memoryWriter();
    const asked: string[] = [];
    const error = await writeVerified(
      writer,
      [{ path: '~/a', expectedSha256: null, content: bytes('A') }],
      {
        readBack: (path) => {
          asked.push(path);
          return Promise.resolve(null);
        },
      },
    ).catch((e: unknown) => e);
    expect(asked).to.deep.equal(['~/a']);
    expect(isFleetError(error) && error.message).to.match(/~\/a reads back as missing/);
    expect(log).to.deep.equal(['write ~/a', 'restore ~/a']);
  });
});
