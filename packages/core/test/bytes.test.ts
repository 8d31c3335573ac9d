/**
 * A files entry whose source is not UTF-8 text is compared by bytes (core `classify/bytes.ts`,
 * contract §10.4), as Ansible's `copy` compares checksums and chezmoi compares a file's contents:
 * the live sha256 against the source's, each published version's and each of fleet's own writes.
 */
import { expect } from 'chai';
import { classifyBytes, describeBytes, sha256Hex, versionBytes } from '../src/classify/bytes.js';
import type { FleetWrite, VersionSource } from '../src/classify/classify.js';

const latin1 = Buffer.from('caf\xe9\n', 'latin1');
const utf8 = Buffer.from('café\n', 'utf8');
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]);
const older = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]);
const head: VersionSource = { kind: 'commit', commit: 'c'.repeat(40) };
const v1: VersionSource = { kind: 'commit', commit: 'a'.repeat(40), date: '2026-01-01T00:00:00Z' };
const write: FleetWrite = {
  sha256: sha256Hex(Buffer.from('fleet wrote this\0')),
  at: '2026-02-02T00:00:00Z',
  operationId: '01JAAAAAAAAAAAAAAAAAAAAAAA',
};
const known = new Map([[sha256Hex(older), v1]]);

describe('bytes: a source that is not UTF-8 text is compared by bytes (pure)', () => {
  const cases: {
    name: string;
    desired: Buffer;
    live: Buffer | null;
    writes?: FleetWrite[];
    state: string;
    equals?: VersionSource;
  }[] = [
    {
      name: 'a Latin-1 live file over a Latin-1 source is current, as Ansible copy is "ok"',
      desired: latin1,
      live: latin1,
      state: 'current',
    },
    {
      name: 'the same text in UTF-8 over a Latin-1 source is other bytes: never current',
      desired: latin1,
      live: utf8,
      state: 'modified',
    },
    {
      name: 'a binary file equal to its source is current',
      desired: png,
      live: png,
      state: 'current',
    },
    {
      name: 'an earlier published version is stale, named by its commit',
      desired: png,
      live: older,
      state: 'stale',
      equals: v1,
    },
    {
      name: "fleet's own earlier write is stale, named by its operation",
      desired: png,
      live: Buffer.from('fleet wrote this\0'),
      writes: [write],
      state: 'stale',
      equals: { kind: 'installed', at: write.at, operationId: write.operationId },
    },
    {
      name: 'bytes of no known version are a hand change (modified), as chezmoi refuses to overwrite',
      desired: png,
      live: Buffer.from('edited by hand\0'),
      state: 'modified',
    },
    { name: 'no file, never written: missing', desired: png, live: null, state: 'missing' },
    {
      name: 'no file, written before: deleted',
      desired: png,
      live: null,
      writes: [write],
      state: 'deleted',
    },
  ];
  for (const { name, desired, live, writes = [], state, equals } of cases) {
    it(name, () => {
      const got = classifyBytes(
        { sha256: live === null ? null : sha256Hex(live), writes },
        { sha256: sha256Hex(desired), source: head },
        (hash) => known.get(hash),
      );
      expect(got.state).to.equal(state);
      if (equals !== undefined) expect(got).to.deep.include({ equals });
    });
  }

  it("a version's bytes: base64 decoded when it is not text, UTF-8 when it is", () => {
    const base64 = { content: png.toString('base64'), encoding: 'base64' as const };
    expect(Buffer.from(versionBytes(base64)).equals(png)).to.equal(true);
    expect(Buffer.from(versionBytes({ content: 'café\n' })).equals(utf8)).to.equal(true);
  });

  it('a diff names a binary side by its size and sha256, never its bytes', () => {
    expect(describeBytes(6, sha256Hex(png))).to.equal(`binary, 6 bytes, sha256 ${sha256Hex(png)}`);
    expect(describeBytes(1, 'x')).to.equal('binary, 1 byte, sha256 x');
  });
});
