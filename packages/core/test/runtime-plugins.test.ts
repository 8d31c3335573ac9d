/** Plugins that travel to the nodes (contract §10.5): the pins and their comparison, as tables. */
import { expect } from 'chai';
import {
  describePluginMismatch,
  fleetManifestSchema,
  packedFileName,
  parseBuildRecord,
  pinnedTarballPath,
  pluginMismatches,
  type PinnedPlugin,
} from '../src/index.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = '9c1e0aa5'.repeat(5);
const git = (version = '0.1.0', sha256 = A): PinnedPlugin => ({
  name: 'fleet-plugin-gitconfig',
  version,
  sha256,
});
const other: PinnedPlugin = { name: '@acme/fleet-x', version: '2.0.0', sha256: B };

describe('plugin pins', () => {
  const manifest = (plugins: unknown) => ({
    apiVersion: 'fleet/v1',
    canonicalVersion: '0.1.0',
    hosts: {},
    plugins,
  });
  const cases: [string, unknown, string | null][] = [
    ['one pin', [git()], null],
    ['a scoped name', [other], null],
    ['two distinct pins', [git(), other], null],
    ['a name twice', [git(), git('0.2.0', B)], 'a plugin is named twice'],
    ['a short sha256', [{ ...git(), sha256: 'abc' }], 'must be 64 lower-case hex digits'],
    ['an upper-case sha256', [{ ...git(), sha256: A.toUpperCase() }], 'lower-case hex'],
    ['not a version', [{ ...git(), version: 'latest' }], 'must be a semantic version'],
    ['not a package name', [{ ...git(), name: 'Fleet Plugin' }], 'must be an npm package name'],
    ['an unknown field', [{ ...git(), url: 'https://x' }], 'Unrecognized key'],
  ];
  for (const [name, plugins, problem] of cases) {
    it(`fleet.yaml plugins: ${name} → ${problem ?? 'accepted'}`, () => {
      const parsed = fleetManifestSchema.safeParse(manifest(plugins));
      if (problem === null) {
        expect(parsed.success, JSON.stringify(parsed.error?.issues)).to.equal(true);
      } else {
        expect(parsed.success).to.equal(false);
        expect(JSON.stringify(parsed.error?.issues)).to.contain(problem);
      }
    });
  }

  it('fleet.yaml without plugins names none', () => {
    expect(fleetManifestSchema.parse(manifest(undefined)).plugins).to.deep.equal([]);
  });

  it('a build record lists the plugins it carries; one without the field carries none', () => {
    const record = parseBuildRecord(
      JSON.stringify({ schema: 'fleet.build/v1', commit: C, dirty: false, plugins: [git()] }),
      'r',
    );
    expect(record.plugins).to.deep.equal([git()]);
    const bare = parseBuildRecord(
      JSON.stringify({ schema: 'fleet.build/v1', commit: C, dirty: false }),
      'r',
    );
    expect(bare.plugins).to.deep.equal([]);
  });

  const files: [string, string, string][] = [
    ['fleet-plugin-gitconfig', '0.1.0', 'fleet-plugin-gitconfig-0.1.0.tgz'],
    ['@acme/fleet-x', '2.0.0-rc.1', 'acme-fleet-x-2.0.0-rc.1.tgz'],
  ];
  for (const [name, version, file] of files) {
    it(`${name}@${version} is packed as ${file}, kept at artifacts/plugins/${file}`, () => {
      expect(packedFileName(name, version)).to.equal(file);
      expect(pinnedTarballPath({ name, version })).to.equal(`artifacts/plugins/${file}`);
    });
  }
});

describe('plugin mismatches (fleet.yaml against what is carried)', () => {
  const cases: [string, PinnedPlugin[], PinnedPlugin[], [string, string | null][]][] = [
    ['nothing named, nothing carried', [], [], []],
    ['nothing named, one carried (no mismatch)', [], [git()], []],
    ['named and carried alike', [git()], [git()], []],
    ['named, carried nothing', [git()], [], [['fleet-plugin-gitconfig', null]]],
    [
      'named, another version carried',
      [git()],
      [git('0.0.9')],
      [['fleet-plugin-gitconfig', '0.0.9']],
    ],
    [
      'named, same version, another build',
      [git()],
      [git('0.1.0', B)],
      [['fleet-plugin-gitconfig', '0.1.0']],
    ],
    ['two named, one carried', [git(), other], [git()], [['@acme/fleet-x', null]]],
  ];
  for (const [name, named, carried, want] of cases) {
    it(name, () => {
      expect(
        pluginMismatches(named, carried).map((m) => [m.expected.name, m.actual?.version ?? null]),
      ).to.deep.equal(want);
    });
  }

  it('one line names the plugin, its pin and what the other side has', () => {
    const [missing] = pluginMismatches([git()], []);
    const [changed] = pluginMismatches([git()], [git('0.1.0', B)]);
    expect(describePluginMismatch(missing!, 'the artifact x.tgz')).to.equal(
      `fleet.yaml names plugin fleet-plugin-gitconfig 0.1.0 (sha256 ${A.slice(0, 12)}), but the artifact x.tgz carries no plugin fleet-plugin-gitconfig`,
    );
    expect(describePluginMismatch(changed!, 'the node')).to.equal(
      `fleet.yaml names plugin fleet-plugin-gitconfig 0.1.0 (sha256 ${A.slice(0, 12)}), but the node carries fleet-plugin-gitconfig 0.1.0 (sha256 ${B.slice(0, 12)})`,
    );
  });
});
