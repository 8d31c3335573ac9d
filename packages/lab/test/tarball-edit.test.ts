/** Editing files inside a packed tarball (`fleet lab build --version`), as tables of cases. */
import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import { readTgz } from '@fleet/controller';
import { isFleetError, parseManifest } from '@fleet/core';
import { makeTgz, paxPath, type FixtureEntry } from '@fleet/testkit';
import { labBuildRefusal } from '../src/build.js';
import { editJsonText, editTarballFiles } from '@fleet/core';

const pkg = '{\n  "name": "@fleet/cli",\n  "version": "0.1.0",\n  "bin": "x"\n}\n';
const packed: FixtureEntry[] = [
  { path: 'package/bin/run.js', data: '#!/usr/bin/env node\n', mode: 0o755 },
  { path: 'package/package.json', data: pkg },
  { path: 'package/dist/a.js', data: 'x'.repeat(700) },
];
const setVersion = (old: Buffer) =>
  Buffer.from(editJsonText(old.toString('utf8'), { version: '0.2.0' }));

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isFleetError(error) && error.code).to.equal('GENERATION_INVALID');
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('lab build: editing the packed tarball', () => {
  it('replaces the named file and keeps every other entry, its mode and order', () => {
    const edited = editTarballFiles(
      makeTgz(packed),
      new Map([['package/package.json', setVersion]]),
    );
    const entries = readTgz(edited);
    expect(entries.map((e) => e.path)).to.deep.equal(packed.map((e) => e.path));
    expect(JSON.parse(entries[1]!.data.toString('utf8'))).to.deep.equal({
      name: '@fleet/cli',
      version: '0.2.0',
      bin: 'x',
    });
    expect(entries[2]!.data.toString('utf8')).to.equal('x'.repeat(700));
    // the executable bit survives: the mode field of the first header is untouched
    expect(gunzipSync(edited).subarray(100, 107).toString('ascii')).to.equal('0000755');
  });

  const refused: [string, FixtureEntry[], RegExp][] = [
    ['a name it does not hold', [packed[0]!], /holds no package\/package\.json/],
    [
      'an entry a pax header describes',
      [paxPath('package/package.json'), packed[1]!],
      /described by an extended header/,
    ],
    ['a name twice', [packed[1]!, packed[1]!], /in the tarball twice/],
  ];
  for (const [name, entries, message] of refused) {
    it(`refuses ${name}`, () => {
      const tgz = makeTgz(entries);
      expect(
        refusal(() => editTarballFiles(tgz, new Map([['package/package.json', setVersion]]))),
      ).to.match(message);
    });
  }

  const json: [string, string, string][] = [
    ['two-space indent, final newline', pkg, pkg.replace('0.1.0', '0.2.0')],
    ['compact', '{"version":"0.1.0","a":1}', '{"version":"0.2.0","a":1}'],
  ];
  for (const [name, text, want] of json) {
    it(`edits JSON in its own layout: ${name}`, () => {
      expect(editJsonText(text, { version: '0.2.0' })).to.equal(want);
    });
  }
});

describe('lab build: which versions fleet.yaml can take', () => {
  const manifest = parseManifest(
    [
      'apiVersion: fleet/v1',
      'canonicalVersion: 0.1.0',
      'artifacts:',
      `  - { version: 0.1.0, file: artifacts/fleet-cli-0.1.0.tgz, sha256: ${'a'.repeat(64)}, commit: ${'b'.repeat(40)} }`,
      'hosts: {}',
      '',
    ].join('\n'),
  );
  const cases: [string, RegExp | null][] = [
    ['0.2.0', null],
    ['0.2.0-lab.1', null],
    ['0.1.0', /already lists version 0\.1\.0 \(artifacts\/fleet-cli-0\.1\.0\.tgz\)/],
    ['latest', /"latest" is not a semantic version/],
    ['v0.2.0', /is not a semantic version/],
    ['0.2', /is not a semantic version/],
  ];
  for (const [version, want] of cases) {
    it(`${version}: ${want === null ? 'taken' : 'refused'}`, () => {
      const found = labBuildRefusal(manifest, version);
      if (want === null) expect(found).to.equal(null);
      else expect(found).to.match(want);
    });
  }
});
