/** The artifact's build record and the provenance check (contract §1.8), as tables. */
import { expect } from 'chai';
import {
  commitLabel,
  fleetManifestSchema,
  isFleetError,
  parseBuildRecord,
  provenanceProblem,
  versionSetProblem,
} from '../src/index.js';

const C = '9c1e0aa5'.repeat(5);
const D = 'deadbeef'.repeat(5);

describe('build record', () => {
  const records: [string, string, string | RegExp][] = [
    ['a clean build', `{"schema":"fleet.build/v1","commit":"${C}","dirty":false}`, C],
    ['a dirty build', `{"schema":"fleet.build/v1","commit":"${C}","dirty":true}`, `${C}-dirty`],
    [
      'a sha-256 repository',
      `{"schema":"fleet.build/v1","commit":"${'a'.repeat(64)}","dirty":false}`,
      'a'.repeat(64),
    ],
    [
      'an abbreviated commit',
      `{"schema":"fleet.build/v1","commit":"9c1e0aa","dirty":false}`,
      /commit: must be a full git commit hash/,
    ],
    [
      'an unknown field',
      `{"schema":"fleet.build/v1","commit":"${C}","dirty":false,"tag":"x"}`,
      /not a build record/,
    ],
    [
      'a version set by the lab',
      `{"schema":"fleet.build/v1","commit":"${C}","dirty":false,"versionSet":{"by":"fleet lab build","from":"0.1.0","to":"0.2.0-lab.1"}}`,
      C,
    ],
    [
      'a version set by someone else',
      `{"schema":"fleet.build/v1","commit":"${C}","dirty":false,"versionSet":{"by":"sed","from":"0.1.0","to":"0.2.0"}}`,
      /versionSet\.by/,
    ],
    [
      'a version set to a non-semver',
      `{"schema":"fleet.build/v1","commit":"${C}","dirty":false,"versionSet":{"by":"fleet lab build","from":"0.1.0","to":"latest"}}`,
      /versionSet\.to: must be a semantic version/,
    ],
    ['no dirty flag', `{"schema":"fleet.build/v1","commit":"${C}"}`, /dirty/],
    ['not JSON', 'commit=9c1e', /not valid JSON/],
  ];
  for (const [name, text, want] of records) {
    it(`${name}: ${typeof want === 'string' ? want.slice(0, 14) : 'refused'}`, () => {
      if (typeof want === 'string') {
        expect(commitLabel(parseBuildRecord(text, 'r'))).to.equal(want);
        return;
      }
      let error: unknown;
      try {
        parseBuildRecord(text, 'r');
      } catch (caught) {
        error = caught;
      }
      expect(isFleetError(error) && error.code).to.equal('GENERATION_INVALID');
      expect((error as Error).message).to.match(want);
    });
  }

  const checks: [string, string | null, string | null, RegExp | null][] = [
    ['the same commit', C, C, null],
    [
      'another commit',
      D,
      C,
      new RegExp(`records commit ${D} for a\\.tgz, but the artifact was built from ${C}$`),
    ],
    ['a dirty build recorded as clean', C, `${C}-dirty`, /built from .*-dirty$/],
    ['a dirty build recorded as dirty', `${C}-dirty`, `${C}-dirty`, null],
    ['no build record', C, null, /carries no build record .* the commit 9c1e/],
    ['no build record, not listed', null, null, /what it was built from cannot be told/],
    ['not listed, recorded', null, C, null],
  ];
  for (const [name, recorded, carried, problem] of checks) {
    it(`provenance: ${name}`, () => {
      const found = provenanceProblem('a.tgz', recorded, carried);
      if (problem === null) expect(found).to.equal(null);
      else expect(found).to.match(problem);
    });
  }

  const versionSets: [string, string, string | null, RegExp | null][] = [
    ['no version set', '0.1.0', null, null],
    ['the version set', '0.2.0', '0.2.0', null],
    [
      'another version than the one set',
      '0.3.0',
      '0.2.0',
      /^a\.tgz is version 0\.3\.0, but its build record says fleet lab build set it to 0\.2\.0 \(from 0\.1\.0\)$/,
    ],
  ];
  for (const [name, version, setTo, problem] of versionSets) {
    it(`version set: ${name}`, () => {
      const record = parseBuildRecord(
        JSON.stringify({
          schema: 'fleet.build/v1',
          commit: C,
          dirty: false,
          ...(setTo === null
            ? {}
            : { versionSet: { by: 'fleet lab build', from: '0.1.0', to: setTo } }),
        }),
        'r',
      );
      const found = versionSetProblem('a.tgz', version, record);
      if (problem === null) expect(found).to.equal(null);
      else expect(found).to.match(problem);
    });
  }

  it('fleet.yaml takes a full commit hash, -dirty allowed, and nothing shorter', () => {
    const manifest = (commit: string) =>
      fleetManifestSchema.safeParse({
        apiVersion: 'fleet/v1',
        canonicalVersion: '1.0.0',
        artifacts: [{ version: '1.0.0', file: 'a.tgz', sha256: 'a'.repeat(64), commit }],
        hosts: {},
      }).success;
    expect([C, `${C}-dirty`, 'b'.repeat(64)].map(manifest)).to.deep.equal([true, true, true]);
    expect(
      ['deadbeef', '0000000', `${C}-DIRTY`, `${C}x`, 'c'.repeat(41)].map(manifest),
    ).to.deep.equal([false, false, false, false, false]);
  });
});
