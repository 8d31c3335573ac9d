/**
 * fleet.yaml as fleet's own verbs edit it (repo/manifest-edit.ts): `fleet release` pins an
 * artifact and adds its signing key, `fleet host add|remove` set and drop a host. The operator's
 * comments and the rest of the file stay; what is written must validate.
 */
import { expect } from 'chai';
import {
  hostVariablesWith,
  isFleetError,
  manifestWithArtifact,
  manifestWithDomain,
  manifestWithHost,
  manifestWithSigningKey,
  parseManifest,
  type HostEntry,
} from '../src/index.js';

const SHA = 'a'.repeat(64);
const COMMIT = 'b'.repeat(40);
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';
const OTHER_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBw2vB4Zl7Ljc3m1Pqm2cY0h0n1nqv0xF1bQj3WwXz4k';
const BASE = [
  '# my fleet: kept',
  'apiVersion: fleet/v1',
  'canonicalVersion: 0.1.0',
  'artifacts:',
  `  - { version: 0.1.0, file: artifacts/old.tgz, sha256: ${SHA}, commit: ${COMMIT} }`,
  'hosts: {}',
  '',
].join('\n');

describe('manifest edits: pinning an artifact', () => {
  const cases: [string, { version: string; canonical: boolean }, string[], string][] = [
    [
      'a new version, canonical',
      { version: '0.2.0', canonical: true },
      ['0.1.0', '0.2.0'],
      '0.2.0',
    ],
    [
      'a new version, not canonical',
      { version: '0.2.0', canonical: false },
      ['0.1.0', '0.2.0'],
      '0.1.0',
    ],
    [
      'the same version again: replaced, not doubled',
      { version: '0.1.0', canonical: true },
      ['0.1.0'],
      '0.1.0',
    ],
  ];
  for (const [what, input, versions, canonical] of cases) {
    it(what, () => {
      const text = manifestWithArtifact(
        BASE,
        {
          version: input.version,
          file: `.fleet/artifacts/${SHA}.tgz`,
          sha256: SHA,
          commit: COMMIT,
        },
        input.canonical,
      );
      const manifest = parseManifest(text);
      expect(manifest.artifacts.map((a) => a.version)).to.deep.equal(versions);
      expect(manifest.canonicalVersion).to.equal(canonical);
      expect(text).to.contain('# my fleet: kept');
    });
  }
  it('keeps a signature with the pin', () => {
    const signature = 'U1NIU0lH'.repeat(10);
    const manifest = parseManifest(
      manifestWithArtifact(
        BASE,
        { version: '0.2.0', file: 'x.tgz', sha256: SHA, commit: COMMIT, signature },
        true,
      ),
    );
    expect(manifest.artifacts[1]?.signature).to.equal(signature);
  });
  it('refuses a pin fleet.yaml would not accept (nothing to write)', () => {
    expect(() =>
      manifestWithArtifact(
        BASE,
        { version: 'latest', file: 'x.tgz', sha256: SHA, commit: COMMIT },
        true,
      ),
    ).to.throw();
  });
});

describe('manifest edits: signing keys', () => {
  it('adds the first key, then a second, and a key already there changes nothing', () => {
    const one = manifestWithSigningKey(BASE, KEY);
    expect(parseManifest(one).signing?.keys).to.deep.equal([KEY]);
    const two = manifestWithSigningKey(one, OTHER_KEY);
    expect(parseManifest(two).signing?.keys).to.deep.equal([KEY, OTHER_KEY]);
    expect(manifestWithSigningKey(two, KEY)).to.equal(two);
  });
  it('refuses a key that is not Ed25519', () => {
    expect(() => manifestWithSigningKey(BASE, 'ssh-rsa AAAAB3NzaC1yc2E=')).to.throw();
  });
});

describe('manifest edits: hosts', () => {
  const entry: HostEntry = {
    controller: 'https://10.0.0.2:7701',
    tls: { fingerprint: `sha256:${Array.from({ length: 32 }, () => 'AB').join(':')}` },
    platform: 'linux',
    supervisor: 'systemd-user',
    domains: ['files'],
  };
  it('sets a host into an empty map and removes it again', () => {
    const added = manifestWithHost(BASE, 'alpha', entry);
    expect(parseManifest(added).hosts['alpha']?.controller).to.equal(entry.controller);
    expect(Object.keys(parseManifest(manifestWithHost(added, 'alpha', null)).hosts)).to.deep.equal(
      [],
    );
  });
  it('refuses an entry fleet.yaml would not accept (plain http off loopback)', () => {
    expect(() =>
      manifestWithHost(BASE, 'alpha', {
        ...entry,
        controller: 'http://10.0.0.2:7701',
        tls: undefined,
      }),
    ).to.throw();
  });
});

describe('manifest edits: wiring a new domain (fleet plugins new --wire)', () => {
  const WIRED = [
    '# my fleet: kept',
    'apiVersion: fleet/v1',
    'canonicalVersion: 0.1.0',
    'hosts:',
    '  alpha: { controller: http://127.0.0.1:7701, platform: linux, supervisor: lab, domains: [files] }',
    '  beta: { controller: http://127.0.0.1:7702, platform: linux, supervisor: lab }',
    'domains:',
    '  files: { unattended: deny }',
    '',
  ].join('\n');

  function codeOf(run: () => unknown): string {
    try {
      run();
    } catch (error) {
      if (isFleetError(error)) return `${error.code}: ${error.message}`;
      throw error;
    }
    return 'no error';
  }

  it('declares the domain and lists it on the named hosts only, comments kept', () => {
    const text = manifestWithDomain(WIRED, 'npmrc', ['alpha']);
    const manifest = parseManifest(text);
    expect(manifest.hosts['alpha']?.domains).to.deep.equal(['files', 'npmrc']);
    expect(manifest.hosts['beta']?.domains).to.deep.equal([]);
    expect(manifest.domains['npmrc']).to.deep.equal({ unattended: 'deny' });
    expect(text.startsWith('# my fleet: kept\n')).to.equal(true);
  });

  it('lists it on a host that had no domains', () => {
    const manifest = parseManifest(manifestWithDomain(WIRED, 'npmrc', ['beta']));
    expect(manifest.hosts['beta']?.domains).to.deep.equal(['npmrc']);
  });

  const refused: [string, string, string[], RegExp][] = [
    ['a domain fleet.yaml declares', 'files', [], /^USAGE: fleet\.yaml already has domain files/],
    [
      'an unknown host',
      'npmrc',
      ['gamma'],
      /^UNKNOWN_HOST: fleet\.yaml has no host gamma \(it has alpha, beta\)/,
    ],
  ];
  for (const [what, domain, hosts, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(codeOf(() => manifestWithDomain(WIRED, domain, hosts))).to.match(message);
    });
  }

  it('sets a host variable only where it is absent, the rest kept', () => {
    expect(hostVariablesWith(null, 'npmrc_owner', 'alpha-npmrc-owner')).to.equal(
      'npmrc_owner: alpha-npmrc-owner\n',
    );
    expect(hostVariablesWith('# mine\nnode_id: alpha\n', 'npmrc_owner', 'x')).to.equal(
      '# mine\nnode_id: alpha\nnpmrc_owner: x\n',
    );
    expect(hostVariablesWith('npmrc_owner: me\n', 'npmrc_owner', 'x')).to.equal(
      'npmrc_owner: me\n',
    );
    expect(codeOf(() => hostVariablesWith('- a list\n', 'npmrc_owner', 'x'))).to.match(
      /^HOST_FILE_INVALID/,
    );
  });
});
