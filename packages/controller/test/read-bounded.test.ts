/**
 * A live file read to its end within the bound (`readBounded`, `fs/live-read.ts`; contract §14):
 * the buffer is sized by the `fstat` taken before the read, and a file that has grown since (the
 * size it was asked with is too small) is still read whole — or refused with `FILE_TOO_LARGE`
 * once past the bound, never cut short.
 */
import { expect } from 'chai';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '@fleet/core';
import { readBounded } from '../src/fs/live-read.js';

describe('safe-path readBounded: a file read whole, sized by fstat, bounded', () => {
  let dir: string;
  const text = 'x'.repeat(150 * 1024 + 7); // past the 64 KiB a grown buffer starts from, twice
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-read-bounded-'));
    await writeFile(join(dir, 'f'), text);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const readWith = (expected: number, limit = 1024 * 1024): Buffer => {
    const fd = openSync(join(dir, 'f'), 'r');
    try {
      return readBounded(fd, limit, '~/f', expected);
    } finally {
      closeSync(fd);
    }
  };

  const sizes: { name: string; expected: number }[] = [
    { name: 'the size fstat gave', expected: text.length },
    { name: 'a smaller size (the file grew after fstat)', expected: 10 },
    { name: 'size 0 (an empty file that grew)', expected: 0 },
    { name: 'a larger size (the file shrank)', expected: 400 * 1024 },
  ];
  for (const { name, expected } of sizes) {
    it(`reads every byte, asked with ${name}`, () => {
      expect(readWith(expected).toString('utf8')).to.equal(text);
    });
  }

  it('refuses with FILE_TOO_LARGE a file that grew past the bound, whatever fstat said', () => {
    for (const expected of [0, 1000, text.length]) {
      try {
        readWith(expected, 100 * 1024);
        expect.fail('read past the bound');
      } catch (error) {
        expect(error).to.be.instanceOf(FleetError);
        expect((error as FleetError).code).to.equal('FILE_TOO_LARGE');
      }
    }
  });

  it('reads an empty file as no bytes', async () => {
    await writeFile(join(dir, 'f'), '');
    expect(readWith(0).length).to.equal(0);
  });
});
